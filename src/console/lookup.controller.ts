import { Get, HttpCode, Post, Req } from '@nestjs/common';
import type { ObjectKey } from '../common/indicators/index.js';
import { MAX_LOOKUP_KEYS } from '../intel/lookup/lookup.dto.js';
import { LookupService } from '../intel/lookup/lookup.service.js';
import type { LookupResultView } from '../intel/lookup/lookup.dto.js';
import { ConsoleController } from './console-controller.js';
import { type ConsoleRequest, MAX_FORM_BYTES } from './console-http.js';
import { html, type Html } from './html.js';
import { keyOfLine, linesOf, MAX_LOOKUP_LINES } from './indicator-lines.js';
import { objectHref } from './collections.controller.js';
import { alertOf, page } from './views/layout.js';

interface LookupOutcome {
  known: LookupResultView[];
  unknown: string[];
  invalid: { line: string; message: string }[];
}

/** Paste-a-list lookup: every line through the intel lookup service, MAX_LOOKUP_KEYS keys a call. */
@ConsoleController('lookup')
export class LookupController {
  constructor(private readonly lookups: LookupService) {}

  @Get()
  form(@Req() request: ConsoleRequest): Html {
    return lookupPage(request, '');
  }

  @Post()
  @HttpCode(200)
  async lookup(@Req() request: ConsoleRequest): Promise<Html> {
    const text = request.form?.get('indicators') ?? '';
    const lines = linesOf(text);
    if (lines.length === 0) return lookupPage(request, text, undefined, 'Paste at least one indicator, one per line.');
    if (lines.length > MAX_LOOKUP_LINES) {
      return lookupPage(
        request,
        '',
        undefined,
        `That paste has ${lines.length.toLocaleString('en')} lines; one lookup takes at most ${MAX_LOOKUP_LINES.toLocaleString('en')}. Split the list and look it up in parts.`,
      );
    }
    return lookupPage(request, text, await this.run(request, lines));
  }

  private async run(request: ConsoleRequest, lines: string[]): Promise<LookupOutcome> {
    // One entry per distinct key as typed after refanging; the service normalises and answers in order.
    const keys = new Map<string, { key: ObjectKey; line: string }>();
    for (const line of lines) {
      const key = keyOfLine(line);
      keys.set(`${key.type}\n${key.value}`, { key, line });
    }
    const entries = [...keys.values()];
    const outcome: LookupOutcome = { known: [], unknown: [], invalid: [] };
    const seen = new Set<string>();
    for (let start = 0; start < entries.length; start += MAX_LOOKUP_KEYS) {
      const chunk = entries.slice(start, start + MAX_LOOKUP_KEYS);
      const results = await this.lookups.lookup(request.principal!, { keys: chunk.map((entry) => entry.key) });
      results.forEach((result, index) => {
        if (result.error) {
          outcome.invalid.push({ line: chunk[index].line, message: result.error.message });
          return;
        }
        // Two spellings of one key (a defanged and a plain one) are one result.
        const id = `${result.key.type}\n${result.key.value}`;
        if (seen.has(id)) return;
        seen.add(id);
        if (result.matches.length > 0) outcome.known.push(result);
        else outcome.unknown.push(result.key.value);
      });
    }
    return outcome;
  }
}

function lookupPage(request: ConsoleRequest, text: string, outcome?: LookupOutcome, message?: string): Html {
  return page(
    request,
    'Lookup',
    html`${alertOf(message)}
<form method="post" action="/console/lookup" class="stack" hx-target="body">
<label for="indicators">Indicators</label>
<textarea id="indicators" name="indicators" rows="6" spellcheck="false" aria-describedby="indicators-help">${text}</textarea>
<p id="indicators-help" class="note">One per line: hashes, domain names, URLs, IP addresses or networks. Defanged forms
(hxxp, [.], (.), [:], [at]) are accepted. Up to ${MAX_LOOKUP_LINES.toLocaleString('en')} lines and
${MAX_FORM_BYTES / 1024 / 1024} MiB a paste.</p>
<p class="row"><button type="submit">Look up</button><span class="busy" aria-hidden="true">Looking up…</span></p>
</form>
${outcome && results(outcome)}`,
  );
}

function results(outcome: LookupOutcome): Html {
  return html`<section aria-labelledby="summary"><h2 id="summary" tabindex="-1">${outcome.known.length} known, ${outcome.unknown.length} unknown${
    outcome.invalid.length > 0 ? html`, ${outcome.invalid.length} not indicators` : ''
  }</h2>
${
  outcome.known.length > 0 &&
  html`<table id="known"><caption>Known</caption><thead><tr><th scope="col">Indicator</th><th scope="col">Type</th><th scope="col">Found in</th></tr></thead>
<tbody>${outcome.known.map(
    (result) => html`<tr><td class="mono">${result.key.value}</td><td>${result.key.type}</td><td>${result.matches.map(
      (match) => html`<a href="${objectHref(match.collection, result.key)}">${match.collection}</a> `,
    )}</td></tr>`,
  )}</tbody></table>`
}
${
  outcome.unknown.length > 0 &&
  html`<div class="stack"><label for="unknown">Unknown indicators (${outcome.unknown.length}), to copy</label>
<textarea id="unknown" readonly rows="8">${outcome.unknown.join('\n')}</textarea></div>`
}
${
  outcome.invalid.length > 0 &&
  html`<table id="invalid"><caption>Not indicators</caption><thead><tr><th scope="col">Line</th><th scope="col">Why</th></tr></thead>
<tbody>${outcome.invalid.map((entry) => html`<tr><td class="mono">${entry.line}</td><td>${entry.message}</td></tr>`)}</tbody></table>`
}
</section>`;
}
