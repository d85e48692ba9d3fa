import Mustache

/// The page's templates and style sheet, compiled into the binary (no file, no CDN, no network).
enum Templates {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        // The templates are constants of this file: a parse error is a bug caught by every test
        // that renders a page, so it stops here rather than rendering nothing.
        do {
            try library.register(page, named: "page")
            try library.register(funnel, named: "funnel")
            try library.register(trend, named: "trend")
            try library.register(arms, named: "arms")
            try library.register(table, named: "table")
        } catch {
            fatalError("an insights template does not parse: \(error)")
        }
        return library
    }()

    static let page = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{title}} · Onboarding insights</title>
        <style>{{{css}}}</style>
        </head>
        <body>
        <a class="skip" href="#main">Skip to the content</a>
        <header>
        <span class="brand">Onboarding insights</span>
        {{#hasNavigation}}<nav aria-label="Dashboard">{{#navigation}}<a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a> {{/navigation}}</nav>{{/hasNavigation}}
        {{#signOut}}<form method="post" action="/dashboard/sign-out" class="sign-out"><button type="submit">Sign out</button></form>{{/signOut}}
        </header>
        <main id="main" tabindex="-1">
        <h1>{{title}}</h1>
        {{#subtitle}}<p class="subtitle">{{subtitle}}</p>{{/subtitle}}
        {{#sections}}
        {{#funnel}}{{> funnel}}{{/funnel}}
        {{#trend}}{{> trend}}{{/trend}}
        {{#arms}}{{> arms}}{{/arms}}
        {{#table}}{{> table}}{{/table}}
        {{#links}}<section class="links"><h2>{{heading}}</h2><ul>{{#items}}<li><a href="{{href}}">{{label}}</a></li>{{/items}}</ul></section>{{/links}}
        {{#form}}<form class="filter" method="{{method}}" action="{{action}}">{{#fields}}<label for="{{id}}">{{label}}</label> <input id="{{id}}" name="{{name}}" type="{{type}}" value="{{value}}"{{#post}} required{{/post}}> {{/fields}}<button type="submit">{{submit}}</button></form>{{/form}}
        {{#text}}<p>{{text}}</p>{{/text}}
        {{/sections}}
        </main>
        <footer>{{footer}}</footer>
        </body>
        </html>

        """

    static let funnel = """
        <section class="chart" aria-labelledby="{{id}}">
        <h2 id="{{id}}">{{title}}</h2>
        <div class="pair">
        <svg role="img" aria-labelledby="{{id}}-svg" viewBox="0 0 640 {{height}}" width="640" height="{{height}}">
        <title id="{{id}}-svg">{{title}}: how many reached each stage (the table beside it has the numbers)</title>
        {{#bars}}<text x="0" y="{{textY}}" class="label">{{label}}</text><rect x="{{x}}" y="{{y}}" width="{{width}}" height="20" class="bar"><title>{{label}}: {{reached}}</title></rect><text x="{{valueX}}" y="{{textY}}" class="value">{{reached}}</text>
        {{/bars}}</svg>
        <table data-chart="funnel" id="{{id}}-table">
        <caption>{{title}}</caption>
        <thead><tr><th scope="col">Stage</th><th scope="col">Reached</th><th scope="col">Dropped</th><th scope="col">Drop-off</th></tr></thead>
        <tbody>{{#rows}}<tr><th scope="row">{{label}}</th><td class="n" data-field="reached">{{reached}}</td><td class="n" data-field="dropped">{{dropped}}</td><td class="n" data-field="dropOff">{{dropOff}}</td></tr>
        {{/rows}}</tbody>
        </table>
        </div>
        </section>

        """

    static let trend = """
        <section class="chart" aria-labelledby="{{id}}">
        <h2 id="{{id}}">{{title}}</h2>
        <div class="pair">
        {{^empty}}<svg role="img" aria-labelledby="{{id}}-svg" viewBox="0 0 640 {{height}}" width="640" height="{{height}}">
        <title id="{{id}}-svg">{{title}} from {{first}} to {{last}}: started (solid) and completed (dashed) per day, at most {{most}}</title>
        <line x1="50" y1="140" x2="630" y2="140" class="axis"/><text x="0" y="14" class="value">{{most}}</text><text x="0" y="140" class="value">0</text>
        <text x="50" y="156" class="value">{{first}}</text><text x="630" y="156" class="value end">{{last}}</text>
        <polyline points="{{startedPoints}}" class="started"/><polyline points="{{completedPoints}}" class="completed"/>
        </svg>{{/empty}}
        {{#empty}}<p>No accounts in this range.</p>{{/empty}}
        <table data-chart="trend" id="{{id}}-table">
        <caption>{{title}}</caption>
        <thead><tr><th scope="col">Day (UTC)</th><th scope="col">Started</th><th scope="col">Completed</th></tr></thead>
        <tbody>{{#rows}}<tr><th scope="row">{{day}}</th><td class="n" data-field="started">{{started}}</td><td class="n" data-field="completed">{{completed}}</td></tr>
        {{/rows}}</tbody>
        </table>
        </div>
        </section>

        """

    static let arms = """
        <section class="chart" aria-labelledby="{{id}}">
        <h2 id="{{id}}">{{title}}</h2>
        <p>Goal: {{goal}}. {{conclusion}}</p>
        <div class="pair">
        <svg role="img" aria-labelledby="{{id}}-svg" viewBox="0 0 640 {{height}}" width="640" height="{{height}}">
        <title id="{{id}}-svg">{{title}}: the goal rate of each variant with its 95% interval</title>
        {{#bars}}<text x="0" y="{{textY}}" class="label">{{label}}</text><rect x="{{x}}" y="{{y}}" width="{{width}}" height="20" class="bar"><title>{{label}}: {{rate}}</title></rect><line x1="{{low}}" y1="{{mid}}" x2="{{high}}" y2="{{mid}}" class="interval"/><text x="{{valueX}}" y="{{textY}}" class="value">{{rate}}</text>
        {{/bars}}</svg>
        <table data-chart="arms" id="{{id}}-table">
        <caption>{{title}}</caption>
        <thead><tr><th scope="col">Variant</th><th scope="col">Assigned</th><th scope="col">Exposed</th><th scope="col">Reached the goal</th><th scope="col">Goal rate</th><th scope="col">95% interval</th><th scope="col">Difference to control</th><th scope="col">Its 95% interval</th><th scope="col">Verdict</th></tr></thead>
        <tbody>{{#rows}}<tr><th scope="row">{{variant}}{{#control}} (control){{/control}}</th><td class="n" data-field="assigned">{{assigned}}</td><td class="n" data-field="exposed">{{exposed}}</td><td class="n" data-field="goalReached">{{goalReached}}</td><td class="n" data-field="rate">{{rate}}</td><td class="n">{{interval}}</td><td class="n">{{difference}}</td><td class="n">{{differenceInterval}}</td><td>{{verdict}}</td></tr>
        {{/rows}}</tbody>
        </table>
        </div>
        </section>

        """

    static let table = """
        <section aria-labelledby="{{id}}">
        <table id="{{id}}-table">
        <caption id="{{id}}">{{caption}}</caption>
        <thead><tr>{{#columns}}<th scope="col">{{.}}</th>{{/columns}}</tr></thead>
        <tbody>{{#rows}}<tr>{{#cells}}<td{{#numeric}} class="n"{{/numeric}}>{{#href}}<a href="{{href}}">{{/href}}{{text}}{{#href}}</a>{{/href}}</td>{{/cells}}</tr>
        {{/rows}}</tbody>
        </table>
        </section>

        """

    static let css = """
        :root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--bar:#2f6fdd;--line:#d0d7de;--focus:#bf3989}
        @media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9da7b3;--bar:#5b9cff;--line:#30363d}}
        *{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
        header{display:flex;gap:1.5rem;align-items:center;padding:.75rem 1.5rem;border-bottom:1px solid var(--line);flex-wrap:wrap}
        .brand{font-weight:600}nav a{margin-right:1rem}a{color:var(--bar)}a[aria-current]{font-weight:600;color:var(--fg)}
        main{padding:1rem 1.5rem 2rem;max-width:1280px}h1{font-size:1.5rem;margin:.5rem 0}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
        .subtitle,footer{color:var(--muted)}footer{padding:1rem 1.5rem;border-top:1px solid var(--line)}
        .pair{display:flex;gap:2rem;flex-wrap:wrap;align-items:flex-start}svg{max-width:100%;height:auto}
        svg .label,svg .value{font-size:12px;fill:var(--fg)}svg .end{text-anchor:end}svg .bar{fill:var(--bar)}
        svg .axis{stroke:var(--line)}svg polyline{fill:none;stroke:var(--bar);stroke-width:2}svg .completed{stroke-dasharray:5 4}
        svg .interval{stroke:var(--fg);stroke-width:2}
        table{border-collapse:collapse;margin:.25rem 0}caption{text-align:left;font-weight:600;padding:.25rem 0}
        th,td{border-bottom:1px solid var(--line);padding:.25rem .6rem;text-align:left}.n{text-align:right;font-variant-numeric:tabular-nums}
        .skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem}
        a:focus-visible,button:focus-visible,input:focus-visible,main:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
        form.filter{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap;margin:1rem 0}input{font:inherit;padding:.2rem .4rem}
        button{font:inherit;padding:.25rem .8rem;cursor:pointer}.sign-out{margin-left:auto}
        """
}
