/** The request every chat benchmark sends: one question the offline model answers without tools. */
export const CHAT_BODY = JSON.stringify({
  messages: [{ role: "user", content: "Hello! What can you do for me?" }],
});
