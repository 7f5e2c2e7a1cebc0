import { describe, expect, it } from 'vitest';

import { estimateInputTokens, FILE_PART_TOKENS } from '../../src/adapters/input-tokens.js';

// The conservative input estimate must not fall below what a real tokeniser counts, or a call's
// reservation is not its worst case and concurrent calls pass the ceiling between them
// (docs/design/rules.md#m5). The counts below are cl100k_base's (js-tiktoken), for each text
// repeated ten times; o200k_base counts fewer for every one of them.

const user = (text: string) => [{ role: 'user', content: [{ type: 'text', text }] }];

const MEASURED: readonly (readonly [string, string, number])[] = [
  ['Chinese', '请帮我总结一下这篇关于机器学习模型在医疗诊断中应用的文章的主要观点和结论。', 440],
  ['Japanese', 'このドキュメントの要点を三つの箇条書きでまとめてください。専門用語はできるだけ避けてください。', 440],
  ['Korean', '이 문서의 핵심 내용을 세 가지 요점으로 요약해 주세요. 전문 용어는 가능한 한 피해 주세요.', 420],
  ['Russian', 'Пожалуйста, кратко изложите основные выводы этой статьи о применении моделей машинного обучения.', 390],
  ['Hindi', 'कृपया इस लेख के मुख्य निष्कर्षों का संक्षेप में सारांश दें और तकनीकी शब्दों से बचें।', 840],
  ['emoji', '🎉🚀✨👍'.repeat(5), 550],
];

describe('estimateInputTokens outside English (docs/design/rules.md#m5)', () => {
  for (const [language, text, measured] of MEASURED) {
    it(`M5: does not estimate ${language} text below what cl100k_base counts`, () => {
      expect(estimateInputTokens(user(text.repeat(10)))).toBeGreaterThanOrEqual(measured);
    });
  }

  it('still counts ASCII text at 3 characters a token', () => {
    expect(estimateInputTokens(user('a'.repeat(300)))).toBe(3 + 4 + Math.ceil((300 + 'role'.length + 'user'.length + 'content'.length + 'type'.length + 'text'.length + 'text'.length) / 3));
  });
});

describe('estimateInputTokens of images in tool results', () => {
  // A 300 kB screenshot, as base64: counted as text it would be about 130 000 tokens, where the
  // providers bill an image at under about 1 600.
  const screenshot = 'iVBORw0KGgo'.padEnd(400_000, 'A');

  it("M5: counts an AI SDK tool result's image-data, file-data or media part as one file, not its base64", () => {
    for (const part of [
      { type: 'image-data', data: screenshot, mediaType: 'image/png' },
      { type: 'file-data', data: screenshot, mediaType: 'application/pdf' },
      { type: 'media', data: screenshot, mediaType: 'image/png' },
    ]) {
      const prompt = [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'screenshot', output: { type: 'content', value: [part] } }] }];
      expect(estimateInputTokens(prompt)).toBeLessThan(FILE_PART_TOKENS + 100);
      expect(estimateInputTokens(prompt)).toBeGreaterThanOrEqual(FILE_PART_TOKENS);
    }
  });

  it("M5: counts an Agents SDK computer-use screenshot as one file, not its base64", () => {
    const item = { type: 'computer_call_result', callId: 'c1', output: { type: 'computer_screenshot', data: `data:image/png;base64,${screenshot}` } };
    expect(estimateInputTokens([item])).toBeLessThan(FILE_PART_TOKENS + 100);
  });
});
