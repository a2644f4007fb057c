import { describeWithBackend } from '@mcp-fleet/testing';
import { wrapperBehaviour } from './behaviour';
import { postgresFixture, sqliteFixture } from './fixtures';

describe('sql-mcp-wrapper behaviour [sqlite]', () => {
  wrapperBehaviour(sqliteFixture);
});

describeWithBackend('postgres', 'sql-mcp-wrapper behaviour', () => {
  wrapperBehaviour(postgresFixture);
});
