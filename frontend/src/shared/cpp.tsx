// Lexical C/C++ coloring (keywords, comments, strings and characters, numbers, directives), computed
// over the whole text so block comments spanning lines stay colored, then split into lines.
import type { ComponentChildren } from "preact";

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
    /(\b(?:0[xX][\da-fA-F']+|\d[\d']*(?:\.\d*)?(?:[eE][+-]?\d+)?)[uUlLfF]*\b)/.source, // 4 number
    `(\\b(?:${KEYWORDS.split(" ").join("|")})\\b)`, // 5 keyword
  ].join("|"),
  "gm",
);
const CLASSES = ["", "t-c", "t-s", "t-d", "t-n", "t-k"];

export const isCpp = (path: string) => /\.(c|h|cc|hh|cpp|hpp|cxx|hxx|c\+\+|h\+\+|ipp|tpp|inl)$/i.test(path);

/** Lines of `text`, each a list of colored pieces; `rest` renders uncolored text (local search). */
export function cppLines(text: string, rest: (part: string) => ComponentChildren): ComponentChildren[][] {
  const lines: ComponentChildren[][] = [[]];
  const push = (part: string, cls: string) => {
    part.split("\n").forEach((line, i) => {
      const piece = line.replace(/\r$/, "");
      if (i > 0) lines.push([]);
      if (piece) lines[lines.length - 1].push(cls ? <span class={cls}>{rest(piece)}</span> : rest(piece));
    });
  };
  let at = 0;
  for (const m of text.matchAll(TOKEN)) {
    push(text.slice(at, m.index), "");
    push(m[0], CLASSES[m.findIndex((g, i) => i > 0 && g !== undefined)]);
    at = m.index + m[0].length;
  }
  push(text.slice(at), "");
  if (lines.length > 1 && lines[lines.length - 1].length === 0 && /\n$/.test(text)) lines.pop();
  return lines;
}
