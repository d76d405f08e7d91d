/**
 * The address classifier and URL rules, on addresses as DATA: nothing here
 * opens a socket (network safety rule).
 */
import { describe, expect, test } from "bun:test";
import { RequestValidationError } from "../../src/lib/errors.ts";
import { checkHost, classifyAddress, type Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { validateWebhookUrl } from "../../src/modules/webhooks/url.ts";

const HOSTILE: [string, string][] = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["169.254.169.254", "linkLocal"], // cloud metadata
  ["169.254.0.1", "linkLocal"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["100.64.0.1", "carrierGradeNat"],
  ["100.127.255.254", "carrierGradeNat"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["192.0.0.8", "reserved"],
  ["192.0.2.10", "reserved"], // TEST-NET-1
  ["198.51.100.7", "reserved"], // TEST-NET-2
  ["203.0.113.9", "reserved"], // TEST-NET-3
  ["198.18.0.1", "reserved"], // benchmarking
  ["240.0.0.1", "reserved"],
  ["::1", "loopback"],
  ["::", "unspecified"],
  ["fe80::1", "linkLocal"],
  ["fe80::1%eth0", "linkLocal"],
  ["fec0::1", "linkLocal"], // deprecated site-local
  ["fc00::1", "uniqueLocal"],
  ["fd12:3456:789a::1", "uniqueLocal"],
  ["ff02::1", "multicast"],
  ["::ffff:127.0.0.1", "loopback"], // IPv4-mapped
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "linkLocal"],
  ["::ffff:0:192.168.0.1", "private"], // SIIT (rfc6145)
  ["::127.0.0.1", "loopback"], // IPv4-compatible
  ["::10.1.2.3", "private"],
  ["64:ff9b::127.0.0.1", "loopback"], // NAT64
  ["64:ff9b::a00:1", "private"],
  ["64:ff9b:1::a9fe:a9fe", "linkLocal"], // local-use NAT64 carrying 169.254.169.254
  ["2002:7f00:1::1", "loopback"], // 6to4 of 127.0.0.1
  ["2002:c0a8:101::1", "private"], // 6to4 of 192.168.1.1
  ["2001:db8::1", "reserved"], // documentation
  ["2001::1", "teredo"],
  ["100::1", "reserved"], // discard prefix
  ["::2", "unspecified"], // IPv4-compatible form of 0.0.0.2
  ["1::1", "reserved"], // rest of ::/8
  ["4000::1", "reserved"], // outside 2000::/3
  ["[::1]", "loopback"],
];

describe("classifyAddress", () => {
  test(`blocks every hostile address (${HOSTILE.length} cases)`, () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(40);
    for (const [ip, cls] of HOSTILE) expect([ip, classifyAddress(ip)]).toEqual([ip, cls]);
  });

  test.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ])("public: %s", (ip) => {
    expect(classifyAddress(ip)).toBe("public");
  });

  test("non-canonical notations are not addresses here (the URL parser normalises them first)", () => {
    for (const ip of ["2130706433", "0177.0.0.1", "0x7f.0.0.1", "127.1", "127.0.0.1.", "localhost", ""])
      expect(classifyAddress(ip)).toBe("invalid");
  });

  test("WEBHOOK_ALLOW_PRIVATE_CIDRS is the only bypass, and only for what it names", () => {
    const allow = ["127.0.0.0/8", "::1/128"];
    expect(classifyAddress("127.0.0.1", allow)).toBe("allowed");
    expect(classifyAddress("::ffff:127.0.0.1", allow)).toBe("allowed");
    expect(classifyAddress("::1", allow)).toBe("allowed");
    expect(classifyAddress("10.0.0.1", allow)).toBe("private");
    expect(classifyAddress("169.254.169.254", allow)).toBe("linkLocal");
    expect(classifyAddress("fe80::1", allow)).toBe("linkLocal");
  });
});

describe("checkHost (fake resolver, no DNS, no sockets)", () => {
  const resolver: Resolver = async (h) => {
    const table: Record<string, { address: string; family: 4 | 6 }[]> = {
      "public.example": [{ address: "93.184.216.34", family: 4 }],
      "mixed.example": [
        { address: "93.184.216.34", family: 4 },
        { address: "10.0.0.5", family: 4 },
      ],
      "v6.example": [
        { address: "2606:4700::1", family: 6 },
        { address: "fd00::1", family: 6 },
      ],
      "empty.example": [],
    };
    const r = table[h];
    if (!r) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return r;
  };
  test("public host passes and pins its first address", async () => {
    expect(await checkHost("public.example", [], resolver)).toEqual({
      ok: true,
      address: { address: "93.184.216.34", family: 4 },
    });
    expect(await checkHost("public.example.", [], resolver)).toMatchObject({ ok: true });
  });
  test("any blocked address blocks the host", async () => {
    expect(await checkHost("mixed.example", [], resolver)).toMatchObject({ ok: false, reason: "address_blocked" });
    expect(await checkHost("v6.example", [], resolver)).toMatchObject({ ok: false, reason: "address_blocked" });
  });
  test("unresolvable or empty answer is a dns failure", async () => {
    expect(await checkHost("nx.example", [], resolver)).toMatchObject({ ok: false, reason: "dns" });
    expect(await checkHost("empty.example", [], resolver)).toMatchObject({ ok: false, reason: "dns" });
  });
  test("IP literals are classified without resolving", async () => {
    const never: Resolver = () => Promise.reject(new Error("must not resolve"));
    expect(await checkHost("[::1]", [], never)).toMatchObject({ ok: false, reason: "address_blocked" });
    expect(await checkHost("8.8.8.8", [], never)).toMatchObject({ ok: true });
  });
});

describe("validateWebhookUrl (create/update)", () => {
  const bad = (url: string, allow: string[] = []) => {
    try {
      validateWebhookUrl(url, ["body", "url"], allow);
    } catch (e) {
      expect(e).toBeInstanceOf(RequestValidationError);
      return (e as RequestValidationError).items[0]!;
    }
    throw new Error(`accepted ${url}`);
  };
  test.each([
    ["https://2130706433/hook", "value_error"], // decimal 127.0.0.1
    ["https://017700000001/hook", "value_error"], // octal
    ["https://0x7f000001/hook", "value_error"], // hex
    ["https://0x7f.0.0.1/hook", "value_error"],
    ["https://0177.0.0.1/hook", "value_error"],
    ["https://127.1/hook", "value_error"],
    ["https://127.0.0.1./hook", "value_error"], // trailing dot
    ["https://[::ffff:127.0.0.1]/hook", "value_error"],
    ["https://[::1]:8443/hook", "value_error"],
    ["https://0.0.0.0/hook", "value_error"],
    ["https://169.254.169.254/latest/meta-data", "value_error"],
    ["https://10.0.0.1:443/hook", "value_error"],
    ["https://１２７．０．０．１/hook", "value_error"], // full-width digits (IDNA-mapped to 127.0.0.1)
    ["https://localhost/hook", "value_error"],
    ["https://localhost./hook", "value_error"],
    ["https://api.localhost/hook", "value_error"],
    ["https://intranet/hook", "value_error"], // single label
    ["https://user:pass@example.com/hook", "value_error"],
    ["https://user@example.com/hook", "value_error"],
    ["https://example.com/hook#frag", "value_error"],
    ["http://example.com/hook", "url_scheme"],
    ["ftp://example.com/hook", "url_scheme"],
    ["javascript:alert(1)", "url_scheme"],
    ["not a url", "url_parsing"],
    ["https://", "url_parsing"],
  ])("%s → 422 %s", (url, type) => {
    const item = bad(url);
    expect(item.type).toBe(type);
    expect(item.loc).toEqual(["body", "url"]);
  });

  test("host names, public IPs, ports and IDN are accepted (normalised)", () => {
    expect(validateWebhookUrl("https://Example.COM:8443/a?b=1", ["body", "url"], [])).toBe(
      "https://example.com:8443/a?b=1",
    );
    expect(validateWebhookUrl("https://bücher.example/hook", ["body", "url"], [])).toBe(
      "https://xn--bcher-kva.example/hook",
    );
    expect(validateWebhookUrl("https://8.8.8.8/hook", ["body", "url"], [])).toBe("https://8.8.8.8/hook");
    expect(validateWebhookUrl("https://example.com./hook", ["body", "url"], [])).toBe("https://example.com./hook");
  });

  test("loopback literals only with the allow list", () => {
    expect(validateWebhookUrl("https://127.0.0.1:9/h", ["body", "url"], ["127.0.0.0/8"])).toBe("https://127.0.0.1:9/h");
    expect(bad("https://10.0.0.1/h", ["127.0.0.0/8"]).type).toBe("value_error");
  });
});
