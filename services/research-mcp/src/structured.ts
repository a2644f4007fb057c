/**
 * /research/structured: a typed document (question, findings each with citations) built from the
 * results: by the configured chat model when there is one, extractively without (sentences of the
 * best results that hold the question's terms). Every citation points at a result with its URL.
 */
import { AppError, type Logger } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { Config } from './config';
import type { Fetcher } from './fetcher';
import { terms, type Item } from './items';

export interface Citation {
  title: string;
  url: string;
  source: string;
}

export interface Finding {
  statement: string;
  citations: Citation[];
}

export interface StructuredDocument {
  question: string;
  findings: Finding[];
  method: 'model' | 'extractive';
  model?: string;
  /** Why the model was not used although configured (its answer was unusable), when so. */
  modelError?: string;
}

const cite = (i: Item): Citation => ({ title: i.title, url: i.url, source: i.source });

export function extractive(question: string, items: Item[], maxFindings: number): StructuredDocument {
  const q = terms(question);
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const text = item.snippet ?? '';
    const sentences = text.split(/(?<=[.!?])\s+/).filter((s) => s.length > 20);
    const scored = sentences
      .map((s) => ({ s, hits: q.filter((t) => terms(s).includes(t)).length }))
      .filter((x) => x.hits > 0)
      .sort((a, b) => b.hits - a.hits);
    const best = scored[0]?.s ?? (q.some((t) => terms(item.title).includes(t)) ? `${item.title}.` : undefined);
    if (!best) continue;
    const key = best.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push({ statement: best.length > 400 ? `${best.slice(0, 399)}…` : best, citations: [cite(item)] });
    if (findings.length >= maxFindings) break;
  }
  return { question, findings, method: 'extractive' };
}

const modelAnswer = z.object({
  findings: z
    .array(z.object({ statement: z.string().min(1).max(2000), citations: z.array(z.number().int().min(1)).min(1).max(20) }))
    .max(50),
});

export async function withModel(
  question: string,
  items: Item[],
  maxFindings: number,
  deps: { config: Config; fetcher: Fetcher; signal: AbortSignal; logger: Logger },
): Promise<StructuredDocument> {
  const { config, fetcher, signal } = deps;
  const numbered = items.map((it, i) => `[${i + 1}] ${it.title} (${it.source}, ${it.url})\n${it.snippet ?? ''}`).join('\n\n');
  const body = JSON.stringify({
    model: config.LLM_MODEL,
    temperature: 0,
    response_format: { type: 'json_object' },
    messages: [
      {
        role: 'system',
        content:
          'You write research findings strictly from the numbered sources given. Answer JSON only: ' +
          '{"findings":[{"statement":"...","citations":[1,2]}]}. Every statement must be supported by the cited sources. ' +
          `At most ${maxFindings} findings.`,
      },
      { role: 'user', content: `Question: ${question}\n\nSources:\n${numbered}` },
    ],
  });
  const url = `${config.LLM_BASE_URL!.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (config.LLM_API_KEY) headers.authorization = `Bearer ${config.LLM_API_KEY}`;
  const res = await fetcher.send('llm', url, { method: 'POST', headers, body, cache: false }, signal);
  let parsed: z.output<typeof modelAnswer>;
  try {
    const outer = JSON.parse(res.text) as { choices?: { message?: { content?: string } }[] };
    const content = outer.choices?.[0]?.message?.content ?? '';
    parsed = modelAnswer.parse(JSON.parse(content.replace(/^```(json)?\s*|\s*```$/g, '')));
  } catch (err) {
    const doc = extractive(question, items, maxFindings);
    deps.logger.warn('the model answer was not usable; answering extractively', { error: (err as Error).message.slice(0, 200) });
    return { ...doc, modelError: 'the model did not answer the expected JSON; the findings are extractive' };
  }
  const findings: Finding[] = [];
  for (const f of parsed.findings.slice(0, maxFindings)) {
    const citations = [...new Set(f.citations)].filter((n) => n <= items.length).map((n) => cite(items[n - 1]));
    // a statement citing nothing that exists is dropped: every finding must be traceable
    if (citations.length) findings.push({ statement: f.statement, citations });
  }
  if (!findings.length && parsed.findings.length) throw new AppError('UPSTREAM_ERROR', 'The model cited no source that exists; try again.');
  return { question, findings, method: 'model', model: config.LLM_MODEL };
}
