import { APP_JS, CSV_PARSER_JS } from './assets.script';

/** The import's parser, loaded from the very text the dashboard serves. */
const parseCsv = new Function(`${CSV_PARSER_JS}\nreturn parseCsv;`)() as (
  text: string,
) => Array<{ cells: string[]; line: number }>;

describe("the CSV import's parser", () => {
  it('is the one the dashboard script carries', () => {
    expect(APP_JS).toContain(CSV_PARSER_JS);
  });

  it('gives each row the file line it starts on, past blank lines and line breaks in quoted cells', () => {
    const text = [
      'email,name,notes',
      'a@example.com,Ada,"one',
      'two',
      'three"',
      '',
      '   ',
      'b@example.com,"Bo, ""B""",x',
      ',,',
      'c@example.com,Cy,"first\r\nsecond"',
      'd@example.com,Di,last',
    ].join('\r\n');
    expect(parseCsv(text)).toEqual([
      { cells: ['email', 'name', 'notes'], line: 1 },
      { cells: ['a@example.com', 'Ada', 'one\r\ntwo\r\nthree'], line: 2 },
      { cells: ['b@example.com', 'Bo, "B"', 'x'], line: 7 },
      { cells: ['c@example.com', 'Cy', 'first\r\nsecond'], line: 9 },
      { cells: ['d@example.com', 'Di', 'last'], line: 11 },
    ]);
  });

  it('counts LF, CRLF and lone CR line ends alike, a byte order mark and semicolons too', () => {
    const text = '\ufeffemail;name\n\na@example.com;Ada\r\rb@example.com;"B\rB"\nc@example.com;Cy\n';
    expect(parseCsv(text).map((r) => [r.cells[0], r.line])).toEqual([
      ['email', 1],
      ['a@example.com', 3],
      ['b@example.com', 5],
      ['c@example.com', 7],
    ]);
  });
});
