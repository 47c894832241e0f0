import { describe, expect, it } from "vitest";
import { ElicitationAnswers } from "./answers.js";

describe("elicitation answers that come on a later POST", () => {
  it("reach the one call of the session waiting, never another session's", () => {
    const answers = new ElicitationAnswers();
    const heard: string[] = [];
    const stop = answers.listen("alice s1", (action) => heard.push(`s1 ${action}`));
    answers.listen("alice s2", (action) => heard.push(`s2 ${action}`));
    answers.deliver("alice s1", "decline");
    expect(heard).toEqual(["s1 decline"]);
    stop();
    answers.deliver("alice s1", "accept");
    expect(heard).toEqual(["s1 decline"]);
  });

  // A black-box review (h32): an answer names no call, and one decline ended every call of the
  // session waiting, while the other calls' elicitations stayed open in the client.
  it("end no wait while two calls of the session wait: the answer could be either's", () => {
    const answers = new ElicitationAnswers();
    const heard: string[] = [];
    answers.listen("alice s1", (action) => heard.push(`a ${action}`));
    const stopB = answers.listen("alice s1", (action) => heard.push(`b ${action}`));
    answers.deliver("alice s1", "decline");
    expect(heard).toEqual([]);
    stopB();
    answers.deliver("alice s1", "decline");
    expect(heard).toEqual(["a decline"]);
  });
});
