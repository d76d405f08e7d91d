CREATE INDEX "demo_hits_at_idx" ON "demo_hits" USING btree ("at");--> statement-breakpoint
CREATE INDEX "deliveries_event_idx" ON "deliveries" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "deliveries_finished_idx" ON "deliveries" USING btree ("updated_at") WHERE next_attempt_at is null;--> statement-breakpoint
CREATE INDEX "delivery_attempts_started_idx" ON "delivery_attempts" USING btree ("started_at");