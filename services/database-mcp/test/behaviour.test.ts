import { describeWithBackend } from '@mcp-fleet/testing';
import { databaseBehaviour } from './behaviour';
import { postgresFixture, sqliteFixture } from './fixtures';

describe('database-mcp behaviour [sqlite]', () => {
  databaseBehaviour(sqliteFixture);
});

describeWithBackend('postgres', 'database-mcp behaviour', () => {
  databaseBehaviour(postgresFixture);
});
