import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/guard/access.js';
import type { ObjectKey } from '../common/indicators/index.js';
import { MAX_LOOKUP_KEYS } from '../intel/lookup/lookup.dto.js';
import { LookupService } from '../intel/lookup/lookup.service.js';
import { ReadPolicies } from '../read-policy/read-policies.service.js';
import type { ReadPolicy } from '../read-policy/read-policy.js';
import { keyOfLine, linesOf, MAX_LOOKUP_LINES } from './indicator-lines.js';
import type { Screen } from './views/layout.js';
import { lookupView, type LookupOutcome } from './views/lookup.view.js';

/** Paste-a-list lookup: every line through the intel lookup service, MAX_LOOKUP_KEYS keys a call. */
@Injectable()
export class LookupScreen {
  constructor(
    private readonly lookups: LookupService,
    private readonly policies: ReadPolicies,
  ) {}

  async lookup(principal: Principal, text: string): Promise<Screen> {
    const lines = linesOf(text);
    if (lines.length === 0) return lookupView({ text, message: 'Paste at least one indicator, one per line.' });
    if (lines.length > MAX_LOOKUP_LINES) {
      return lookupView({
        text: '',
        message: `That paste has ${lines.length.toLocaleString('en')} lines; one lookup takes at most ${MAX_LOOKUP_LINES.toLocaleString('en')}. Split the list and look it up in parts.`,
      });
    }
    return lookupView({ text, outcome: await this.run(this.policies.of(principal), lines) });
  }

  private async run(policy: ReadPolicy, lines: string[]): Promise<LookupOutcome> {
    // One entry per distinct key as typed after refanging; the service normalises and answers in order.
    const keys = new Map<string, { key: ObjectKey; line: string }>();
    for (const line of lines) {
      const key = keyOfLine(line);
      keys.set(`${key.type}\n${key.value}`, { key, line });
    }
    const entries = [...keys.values()];
    const outcome: LookupOutcome = { known: [], unknown: [], unknownWarned: [], invalid: [] };
    const seen = new Set<string>();
    for (let start = 0; start < entries.length; start += MAX_LOOKUP_KEYS) {
      const chunk = entries.slice(start, start + MAX_LOOKUP_KEYS);
      const results = await this.lookups.lookup(policy, { keys: chunk.map((entry) => entry.key) });
      results.forEach((result, index) => {
        if (result.error) {
          outcome.invalid.push({ line: chunk[index].line, message: result.error.message });
          return;
        }
        // Two spellings of one key (a defanged and a plain one) are one result.
        const id = `${result.key.type}\n${result.key.value}`;
        if (seen.has(id)) return;
        seen.add(id);
        if (result.matches.length > 0) {
          outcome.known.push(result);
          return;
        }
        outcome.unknown.push(result.key.value);
        if (result.warnings.length > 0) outcome.unknownWarned.push(result);
      });
    }
    return outcome;
  }
}
