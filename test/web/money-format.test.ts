import { describe, expect, it } from 'vitest';

// The dashboard's one money rule (web/src/format.js), in Node: exact conversion both ways, two
// decimals, significant digits below one cent, and errors that name the field.

interface Config {
  currency: string;
  minorUnitsPerUnit: number;
}
type Show = ((minor: number) => string) & { input: (minor: number) => string };
const FORMAT = new URL('../../web/src/format.js', import.meta.url).href;
const { moneyFormat, parseMoney } = (await import(FORMAT)) as {
  moneyFormat: (config: Config) => Show;
  parseMoney: (text: string, config: Config, field: string) => number | undefined;
};

const USD: Config = { currency: 'USD', minorUnitsPerUnit: 1_000_000 };

describe('money on the dashboard', () => {
  it('shows two decimals, and significant digits for a non-zero amount below one cent', () => {
    const show = moneyFormat(USD);
    expect([0, 123, 4_500, 10_000, 1_140_000, 1_234_565, 25_000_000].map(show)).toEqual(['$0.00', '$0.000123', '$0.0045', '$0.01', '$1.14', '$1.23', '$25.00']);
    expect(show(Number.MAX_SAFE_INTEGER)).toBe('$9,007,199,254.74');
    expect(moneyFormat({ currency: 'EUR', minorUnitsPerUnit: 100 })(12_345)).toBe('€123.45');
    expect(moneyFormat({ currency: 'JPY', minorUnitsPerUnit: 1 })(1_234)).toBe('¥1,234');
    expect(show.input(1_234_567_891)).toBe('1234.567891');
    expect(show.input(25_000_000)).toBe('25');
  });

  it('reads typed amounts as exact minor units, with no float rounding', () => {
    expect(parseMoney('5', USD, 'f')).toBe(5_000_000);
    expect(parseMoney(' $1,250.5 ', USD, 'f')).toBe(1_250_500_000);
    expect(parseMoney('0.000125', USD, 'f')).toBe(125);
    // 0.1 + 0.2 style inputs: 1.15 × 10^6 in floating point is 1149999.9999999998.
    expect(parseMoney('1.15', USD, 'f')).toBe(1_150_000);
    expect(parseMoney('9007199254.740991', USD, 'f')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseMoney('', USD, 'f')).toBeUndefined();
  });

  it('refuses what is not an amount, naming the field', () => {
    const refusal = (text: string) => {
      try {
        parseMoney(text, USD, 'maxMinorUnitsPerPeriod');
      } catch (problem) {
        return problem as { field: string; message: string };
      }
      throw new Error(`${text} was accepted`);
    };
    expect(refusal('1e3')).toEqual({ field: 'maxMinorUnitsPerPeriod', message: 'must be an amount in USD such as 5.00, got "1e3"' });
    expect(refusal('-5').field).toBe('maxMinorUnitsPerPeriod');
    expect(refusal('0.0000001').message).toMatch(/more decimals than the minor unit allows \(at most 6/);
    expect(refusal('9007199254.740992').message).toMatch(/larger than the largest amount/);
  });
});
