import { AppError } from '@mcp-fleet/kit';
import { XMLParser } from 'fast-xml-parser';

// No DTD or external entities are ever resolved; only the XML built-ins are decoded.
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  processEntities: true,
  htmlEntities: true,
  trimValues: true,
  parseTagValue: false,
});

export function parseXml(source: string, text: string): Record<string, unknown> {
  try {
    const doc = parser.parse(text) as unknown;
    if (typeof doc !== 'object' || doc === null) throw new Error('empty');
    return doc as Record<string, unknown>;
  } catch {
    throw new AppError('UPSTREAM_ERROR', `${source} answered something that is not XML.`);
  }
}
