/**
 * In-process checks of how a webhook URL's host name is judged at creation
 * (checkWebhookUrl, src/domain/webhooks/endpoints.ts), with DNS answers made up here.
 */
import { expect, test } from "bun:test";
import { checkWebhookUrl as check } from "../src/domain/webhooks/endpoints.ts";

let answer: () => Promise<{ address: string; family: number }[]> = async () => [];
const checkWebhookUrl = (url: string, allowPrivate: boolean) => check(url, allowPrivate, () => answer());

const dnsError = (code: string) => Object.assign(new Error(`getaddrinfo ${code}`), { code });

test("no such name, or no address: 400 'does not resolve', whether or not private addresses are allowed", async () => {
  for (const allowPrivate of [true, false]) {
    answer = () => Promise.reject(dnsError("ENOTFOUND"));
    await expect(checkWebhookUrl("https://hooks.example.invalid/x", allowPrivate)).rejects.toMatchObject({
      kind: "bad_request",
      message: "url: the host name hooks.example.invalid does not resolve",
    });
    answer = () => Promise.reject(dnsError("ENODATA"));
    await expect(checkWebhookUrl("https://hooks.example.invalid/x", allowPrivate)).rejects.toMatchObject({ kind: "bad_request" });
    answer = async () => [];
    await expect(checkWebhookUrl("https://hooks.example.invalid/x", allowPrivate)).rejects.toMatchObject({ kind: "bad_request" });
  }
});

test("DNS failing to answer says nothing about the name: 503, try again", async () => {
  answer = () => Promise.reject(dnsError("EAI_AGAIN"));
  await expect(checkWebhookUrl("https://hooks.example.com/x", false)).rejects.toMatchObject({
    kind: "unavailable",
    message: "url: the host name hooks.example.com could not be resolved now (EAI_AGAIN); try again",
  });
});

test("a name that resolves is judged by its addresses; IP literals need no DNS", async () => {
  answer = async () => [{ address: "93.184.215.14", family: 4 }];
  expect(await checkWebhookUrl("https://hooks.example.com/x", false)).toBe("https://hooks.example.com/x");
  answer = async () => [{ address: "10.1.2.3", family: 4 }];
  await expect(checkWebhookUrl("https://hooks.example.com/x", false)).rejects.toMatchObject({ kind: "bad_request" });
  expect(await checkWebhookUrl("https://hooks.example.com/x", true)).toBe("https://hooks.example.com/x");
  answer = () => Promise.reject(new Error("must not be asked"));
  expect(await checkWebhookUrl("http://127.0.0.1:9/x", true)).toBe("http://127.0.0.1:9/x");
});
