// Lexical C/C++ coloring (keywords, comments, strings and characters, numbers, directives and their
// <header> names, brackets by nesting depth), computed over the whole text so block comments and
// bracket depth carry across lines, as per-line decorations.
import type { ComponentChildren } from "preact";

import { decorate, type Deco } from "./decorate";

const KEYWORDS =
  "alignas alignof auto bool break case catch char char8_t char16_t char32_t class concept const consteval " +
  "constexpr constinit const_cast continue co_await co_return co_yield decltype default delete do double " +
  "dynamic_cast else enum explicit export extern false final float for friend goto if inline int long " +
  "mutable namespace new noexcept nullptr operator override private protected public register " +
  "reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch " +
  "template this thread_local throw true try typedef typeid typename union unsigned using virtual void " +
  "volatile wchar_t while";
const TOKEN = new RegExp(
  [
    /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))/.source, // 1 comment
    /("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)/.source, // 2 string or character
    /(^[ \t]*#[ \t]*[a-z_]+)/.source, // 3 directive
    /((?<=^[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*)<[^>\n]*>)/.source, // 4 header name
    /(\b(?:0[xX][\da-fA-F']+|\d[\d']*(?:\.\d*)?(?:[eE][+-]?\d+)?)[uUlLfF]*\b)/.source, // 5 number
    `(\\b(?:${KEYWORDS.split(" ").join("|")})\\b)`, // 6 keyword
    /([()[\]{}])/.source, // 7 bracket
  ].join("|"),
  "gm",
);
const CLASSES = ["", "t-c", "t-s", "t-d", "t-s", "t-n", "t-k"];
const BRACKET = 7;
const OPENERS = "([{";
const CLOSERS = ")]}";

/** The class of each bracket in turn: its depth (of three colors), or unmatched for a stray closer. */
function brackets() {
  const open: string[] = [];
  const depth = (n: number) => `t-b${n % 3}`;
  return (bracket: string) => {
    const closer = CLOSERS.indexOf(bracket);
    if (closer < 0) return depth(open.push(bracket) - 1);
    if (open.at(-1) !== OPENERS[closer]) return "t-bx";
    open.pop();
    return depth(open.length);
  };
}

export const isCpp = (path: string) => /\.(c|h|cc|hh|cpp|hpp|cxx|hxx|c\+\+|h\+\+|ipp|tpp|inl)$/i.test(path);

/** Per line of `lines` (joined by LF), the lexical decorations in code points. */
export function cppDecos(lines: string[]): Deco[][] {
  const text = lines.join("\n");
  const starts = [0];
  for (const line of lines) starts.push(starts[starts.length - 1] + line.length + 1);
  const out: Deco[][] = lines.map(() => []);
  const bracket = brackets();
  let row = 0;
  for (const m of text.matchAll(TOKEN)) {
    const group = m.findIndex((g, i) => i > 0 && g !== undefined);
    const cls = group === BRACKET ? bracket(m[0]) : CLASSES[group];
    const [from, to] = [m.index, m.index + m[0].length];
    while (starts[row + 1] <= from) row++;
    for (let r = row; r < lines.length && starts[r] < to; r++) {
      const line = lines[r];
      const a = Math.max(from, starts[r]) - starts[r];
      const b = Math.min(to, starts[r] + line.length) - starts[r];
      const cp = (i: number) => Array.from(line.slice(0, i)).length;
      if (b > a) out[r].push({ start: cp(a), end: cp(b), cls });
    }
  }
  return out;
}

/** Colored lines of a C/C++ text (without line endings). */
export const cppLines = (lines: string[], rest: (part: string) => ComponentChildren = (p) => p) =>
  cppDecos(lines).map((decos, i) => decorate(lines[i], decos, rest));
