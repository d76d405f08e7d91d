ALTER TABLE "shipments" ADD COLUMN "estimated_delivery" date;
