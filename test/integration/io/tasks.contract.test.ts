/**
 * The published tasks' contract (`io/tasks/port.ts`), run on every backend: in memory (`io/tasks/memory.ts`) and in
 * PostgreSQL (`io/tasks/postgres.ts`, a throwaway cluster; two pools stand for two instances on one database).
 */
import postgres, { type Sql } from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PublicTask } from '../../../core/tasks.ts';
import { migrate } from '../../../io/postgres/schema.ts';
import { memoryTasks } from '../../../io/tasks/memory.ts';
import type { PublishedTasks } from '../../../io/tasks/port.ts';
import { postgresTasks } from '../../../io/tasks/postgres.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

/** One backend opened for one case: two handles on the same list. */
type Opened = { instances: PublishedTasks[]; close(): Promise<void> };

const task = (name: string, description: string) => ({ name, description }) as unknown as PublicTask;

function testTasks(name: string, open: () => Promise<Opened>): void {
  describe(`published tasks contract: ${name}`, () => {
    let opened: Opened;
    const tasks = (i: number) => opened.instances[i % opened.instances.length] as PublishedTasks;
    beforeEach(async () => {
      opened = await open();
    });
    afterEach(async () => {
      await opened.close();
    });

    it('lists the tasks of every run by name, keeping the copy of the newest run', async () => {
      expect(await tasks(0).list()).toEqual([]);
      await tasks(0).publish('20261124T100000Z-bbbb', [task('fx', 'newer'), task('geo', 'only')]);
      // An older run taken in later, on another instance, does not replace the newer copy.
      await tasks(1).publish('20261117T100000Z-aaaa', [task('fx', 'older'), task('weather', 'older only')]);
      expect(await tasks(1).list()).toEqual([
        task('fx', 'newer'),
        task('geo', 'only'),
        task('weather', 'older only'),
      ]);
      await tasks(1).publish('20261201T100000Z-cccc', [task('fx', 'newest')]);
      expect((await tasks(0).list())[0]).toEqual(task('fx', 'newest'));
    });

    it('takes a run without tasks as nothing', async () => {
      await tasks(0).publish('20261124T100000Z-bbbb', []);
      expect(await tasks(1).list()).toEqual([]);
    });
  });
}

testTasks('memory', async () => {
  const tasks = memoryTasks();
  return { instances: [tasks, tasks], close: async () => {} };
});

describe.skipIf(postgresMissing !== null)('postgres', () => {
  const pg = usePostgres();

  testTasks('postgres, two pools', async () => {
    const url = await pg.createDatabase();
    const sqls = [0, 1].map(() => postgres(url, { max: 2, onnotice: () => {} }));
    await migrate(sqls[0] as Sql);
    return {
      instances: sqls.map((sql) => postgresTasks(sql)),
      close: async () => {
        await Promise.all(sqls.map((sql) => sql.end()));
      },
    };
  });
});
