// The console tables of a page, measured as rendered: for every code block that holds a table
// as the CLI prints it (a header, a rule of dash runs, rows), every cell of every line must
// start where its column's dash run starts (a left-aligned cell) or end where it ends (a
// right-aligned one), within half a pixel. A header the CLI folded onto several lines has its
// last line next to the rule (iteragpu/cli/table.py); rows run to a blank line or the next
// prompt, a row's label folded onto several lines included.
// Also, for every console session (a block that starts with `$ iteragpu`): how wide its widest
// line is against the column it is shown in, and the cells of its tables' headers that name GiB
// and lie beyond the column's visible edge (a reader would have to scroll to the key figure).
// Returns {tables, problems, sessions: [{command, width, column, widest}], offscreen}.
// Evaluated by tests/website/test_layout.py in the page (page.evaluate).
() => {
  const RULE = /^-+(?: +-+)+$/;
  const CELL = /\S+(?: \S+)*/g; // cells are separated by two spaces or more
  const END = /^\s*$|^(?:\$|>>>) /;
  const problems = [];
  const sessions = [];
  const offscreen = [];
  let tables = 0;

  // Every character of a code element, with the text node and offset that hold it.
  function characters(code) {
    const found = [];
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) found.push([node, i]);
    }
    return found;
  }

  function edges(chars, first, last) {
    const range = document.createRange();
    range.setStart(chars[first][0], chars[first][1]);
    range.setEnd(chars[first][0], chars[first][1] + 1);
    const left = range.getBoundingClientRect().left;
    range.setStart(chars[last][0], chars[last][1]);
    range.setEnd(chars[last][0], chars[last][1] + 1);
    return [left, range.getBoundingClientRect().right];
  }

  function spans(line, start) {
    return Array.from(line.matchAll(CELL), (m) => [m[0], start + m.index, start + m.index + m[0].length - 1]);
  }

  for (const code of document.querySelectorAll(".md-typeset pre > code")) {
    const chars = characters(code);
    const text = chars.map(([node, i]) => node.data[i]).join("");
    const lines = [];
    let start = 0;
    for (const line of text.split("\n")) {
      lines.push([line, start]);
      start += line.length + 1;
    }
    const session = /^\$ iteragpu /.test(text);
    // The column's visible edge: the code element scrolls, inside its padding.
    const box = code.getBoundingClientRect();
    const visible = box.left + code.clientWidth - parseFloat(getComputedStyle(code).paddingRight);
    if (session) {
      let widest = ["", 0];
      for (const [line, lineStart] of lines) {
        if (!line.trim()) continue;
        const right = edges(chars, lineStart, lineStart + line.length - 1)[1] - box.left;
        if (right > widest[1]) widest = [line, right];
      }
      sessions.push({
        command: lines[0][0],
        width: code.scrollWidth,
        column: code.clientWidth,
        widest: widest[0],
      });
    }
    lines.forEach(([line, lineStart], index) => {
      if (!RULE.test(line) || index === 0) return;
      tables++;
      const columns = spans(line, lineStart).map(([, a, b]) => edges(chars, a, b));
      if (session) {
        // The header's lines: the one next to the rule and those above it, to a blank line.
        const prompt = lines.slice(0, index).reverse().find(([l]) => l.startsWith("$ "))[0];
        for (let j = index - 1; j >= 0 && lines[j][0].trim() && !END.test(lines[j][0]); j--) {
          for (const [cell, a, b] of spans(...lines[j])) {
            if (/GiB/.test(cell) && edges(chars, a, b)[1] > visible + 0.5) {
              offscreen.push(`${JSON.stringify(cell)} of ${JSON.stringify(prompt)}`);
            }
          }
        }
      }
      const table = [lines[index - 1]];
      // Rows run to a blank line or the next prompt.
      for (let j = index + 1; j < lines.length && !END.test(lines[j][0]); j++) table.push(lines[j]);
      for (const [row, rowStart] of table) {
        for (const [cell, a, b] of spans(row, rowStart)) {
          const [left, right] = edges(chars, a, b);
          const fits = columns.some(
            ([l, r]) =>
              left >= l - 0.5 && right <= r + 0.5 && (Math.abs(left - l) <= 0.5 || Math.abs(right - r) <= 0.5),
          );
          if (!fits) problems.push(`${JSON.stringify(cell)} at ${left.toFixed(1)}-${right.toFixed(1)} in ${JSON.stringify(row)}`);
        }
      }
    });
  }
  return { tables, problems, sessions, offscreen };
}
