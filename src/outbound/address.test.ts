import { describe, expect, it } from "vitest";
import { classifyAddress } from "./address.js";

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["100.64.0.1", "shared-cgnat"],
    ["100.127.255.254", "shared-cgnat"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "multicast"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:a00:1", "private"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:7f00:1::", "loopback"],
    ["::ffff:0:127.0.0.1", "loopback"],
    ["::ffff:0:a9fe:a9fe", "link-local"],
    ["64:ff9b:1::a00:1", "reserved"],
    ["64:ff9b:1:7f00:1::", "reserved"],
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", "reserved"], // Teredo, client 127.0.0.1
    ["3fff::1", "documentation"],
    ["5f00::1", "reserved"],
    ["240.0.0.1", "reserved"],
    ["not-an-ip", "reserved"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "172.15.255.255",
    "172.32.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "2002:808:808::",
    "::ffff:0:808:808",
    "2001:200::1",
    "64:ff9b:2::1",
  ])("%s is public", (address) => {
    expect(classifyAddress(address)).toBeNull();
  });
});
