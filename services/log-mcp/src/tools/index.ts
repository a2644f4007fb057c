import { type Config } from '../config';
import { type LogRoots } from '../lib/log-files';
import { logAnalysisTool } from './log-analysis';
import { logSearchTool } from './log-search';

export function createTools(config: Config, roots: LogRoots) {
  return [logSearchTool(config, roots), logAnalysisTool(config, roots)];
}
