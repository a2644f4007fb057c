export { parsePython, type ParsedCall, type ParsedDef, type ParsedFile, type ParsedImport } from './parse';
export {
  absoluteImportBase,
  buildGraph,
  findCycles,
  stronglyConnected,
  moduleNameOf,
  type BuildGraphOptions,
  type EdgeKind,
  type GraphEdge,
  type GraphNode,
  type NodeKind,
  type SourceFile,
} from './graph';
export { walkPythonFiles, type WalkPythonOptions, type WalkResult } from './walk';
