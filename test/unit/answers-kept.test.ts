// Which answers stay kept, by the README's words ("The answers of the 1,024 records asked for most
// recently are kept in memory"): asking for a kept answer again makes it the most recent, so it
// outlives answers asked for after it was first asked but before it was asked again. And the bound
// on what is kept at all: a payload of up to 16 KiB is kept, a longer one (an MOT history of many
// tests, answers.test.ts) is not.

import { answerKept, keptAnswers, resultInner } from '../../src/transport/answers';

const BOUND = 1024;
const payload = (tag: string, i: number) => JSON.stringify({ Description: `${tag} ${i}` });
const ask = (p: string) => resultInner({ kind: 'Vehicle', payload: p }, 'soap');

test('asking again makes an answer the most recently asked: the next ones to go are those asked before it', () => {
  const p = Array.from({ length: BOUND }, (_, i) => payload('P', i));
  for (const x of p) ask(x);
  expect(keptAnswers()).toBe(BOUND);
  expect(p.every((x) => answerKept('Vehicle', x))).toBe(true);

  // All 1,024 kept: asking one of them again drops none.
  expect(ask(p[5])).toContain('<Description>P 5</Description>');
  expect(keptAnswers()).toBe(BOUND);
  expect(p.every((x) => answerKept('Vehicle', x))).toBe(true);

  // Six new answers: the six least recently asked go, p[0]..p[4] and p[6]; p[5] was asked since.
  for (let i = 0; i < 6; i++) ask(payload('Q', i));
  expect(keptAnswers()).toBe(BOUND);
  expect(p.slice(0, 5).some((x) => answerKept('Vehicle', x))).toBe(false);
  expect(answerKept('Vehicle', p[6])).toBe(false);
  expect(answerKept('Vehicle', p[5])).toBe(true);
  expect(answerKept('Vehicle', p[7])).toBe(true);
});

test('a payload of 16 KiB is kept, one a character longer is answered but not kept', () => {
  const sized = (n: number) => {
    const head = '{"Description":"';
    const s = head + 'x'.repeat(n - head.length - 2) + '"}';
    expect(s).toHaveLength(n);
    return s;
  };
  const atBound = sized(16 * 1024);
  const over = sized(16 * 1024 + 1);
  expect(ask(atBound)).toContain('<Description>xxx');
  expect(ask(over)).toContain('<Description>xxx');
  expect(answerKept('Vehicle', atBound)).toBe(true);
  expect(answerKept('Vehicle', over)).toBe(false);
});
