import Foundation
import Testing

/// An accessibility audit of the page open in `browser`, read from Chromium's own accessibility
/// tree (`Accessibility.getFullAXTree`) and its computed styles: every control has a name, every
/// chart (an image) a text alternative, headings go in order from one h1 without skipping a level,
/// and every piece of text and every bar or line of a chart has a contrast of at least 4.5:1 with
/// what is behind it (WCAG's relative luminance). Returns the problems found, in words.
enum AccessibilityAudit {
    static func problems(_ browser: Browser) throws -> [String] {
        var problems: [String] = []
        _ = try browser.call("Accessibility.enable", [:], inPage: true)
        let tree = try browser.call("Accessibility.getFullAXTree", [:], inPage: true)
        let nodes = tree["nodes"] as? [[String: Any]] ?? []
        if nodes.isEmpty { problems.append("the accessibility tree is empty") }
        var levels: [Int] = []
        for node in nodes where node["ignored"] as? Bool != true {
            let role = (node["role"] as? [String: Any])?["value"] as? String ?? ""
            let name = ((node["name"] as? [String: Any])?["value"] as? String ?? "").trimmingCharacters(
                in: .whitespacesAndNewlines)
            if ["textbox", "combobox", "button", "link", "spinbutton", "checkbox", "searchbox", "listbox"]
                .contains(role), name.isEmpty
            {
                problems.append("a \(role) without a name")
            }
            if role == "image", name.isEmpty {
                problems.append("an image (a chart) without a text alternative")
            }
            if role == "heading" {
                let level = (node["properties"] as? [[String: Any]] ?? []).first {
                    $0["name"] as? String == "level"
                }
                .flatMap { ($0["value"] as? [String: Any])?["value"] as? Int }
                levels.append(level ?? 0)
            }
        }
        if levels.first != 1 { problems.append("the first heading is not an h1 (levels \(levels))") }
        if levels.filter({ $0 == 1 }).count != 1 { problems.append("not exactly one h1 (levels \(levels))") }
        for (previous, level) in zip(levels, levels.dropFirst()) where level > previous + 1 {
            problems.append("a heading skips from level \(previous) to \(level)")
        }
        let contrast = try browser.evaluate(contrastScript) as? [String] ?? ["the contrast check did not run"]
        problems += contrast
        return problems
    }

    /// Text (any element with its own text) and chart marks (bars, lines) against the nearest
    /// opaque background up the tree (the page's white when none).
    static let contrastScript = """
        (() => {
          const parse = c => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
            const p = m[1].split(',').map(s => parseFloat(s)); return {r: p[0], g: p[1], b: p[2], a: \
        p.length > 3 ? p[3] : 1}; };
          const lum = c => [c.r, c.g, c.b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : \
        Math.pow((v + 0.055) / 1.055, 2.4); })
            .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
          const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / \
        (Math.min(x, y) + 0.05); };
          const background = el => { for (let e = el; e; e = e.parentElement) { const c = \
        parse(getComputedStyle(e).backgroundColor);
            if (c && c.a > 0.99) return c; } return {r: 255, g: 255, b: 255, a: 1}; };
          const problems = [];
          for (const el of document.querySelectorAll('body *')) {
            const style = getComputedStyle(el);
            if (style.display === 'none' || style.visibility === 'hidden') continue;
            if (el.closest('.skip') && document.activeElement !== el) continue;
            const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
            const svg = el instanceof SVGElement;
            if (own && !(el.tagName === 'title')) {
              const color = parse(svg ? style.fill : style.color);
              if (color && ratio(color, background(el.closest('svg') || el)) < 4.5)
                problems.push('text "' + el.textContent.trim().slice(0, 40) + '" has contrast ' + \
        ratio(color, background(el)).toFixed(2));
            }
            if (svg && ['rect', 'polyline', 'circle', 'line'].includes(el.tagName) && \
        !el.classList.contains('axis') && !el.classList.contains('band')) {
              const paint = parse(el.tagName === 'rect' || el.tagName === 'circle' ? style.fill : \
        style.stroke);
              if (paint && paint.a > 0.99 && ratio(paint, background(el.closest('svg'))) < 4.5)
                problems.push('a chart mark (' + el.tagName + '.' + el.getAttribute('class') + ') has \
        contrast ' + ratio(paint, background(el.closest('svg'))).toFixed(2));
            }
          }
          return problems;
        })()
        """
}
