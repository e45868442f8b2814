import { expect } from 'chai';
import { appendFile, chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../src/index.js';
import { createExclusive } from '../src/storage/durable/files.js';
import { encodeRecord } from '../src/storage/durable/records.js';
import { Journal } from '../src/storage/durable/journal.js';
import { RecordingWatch, serveDataInChild, startWithClients, webPageCrd } from './helpers.js';

async function startError(options: Parameters<typeof startApiServer>[0]): Promise<string> {
  let server: ApiServer | undefined;
  try {
    server = await startApiServer({ clientNode: false, ...options });
  } catch (err) {
    return String(err);
  }
  await server.close();
  return 'started';
}

async function createConfigMap(
  server: ApiServer,
  name: string,
  data: Record<string, string> = {},
): Promise<{ metadata: { resourceVersion: string } }> {
  const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ metadata: { name }, data }),
  });
  expect(res.status).to.equal(201);
  return (await res.json()) as { metadata: { resourceVersion: string } };
}

async function configMapNames(server: ApiServer): Promise<string[]> {
  const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`);
  const list = (await res.json()) as { items: { metadata: { name: string } }[] };
  return list.items.map((i) => i.metadata.name);
}

const walFiles = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((f) => f.startsWith('wal-')).sort();

/**
 * A copy of a live data directory, as a crash would leave it. A temp file may vanish while it is
 * copied (a compaction renames it); it is never part of the durable state, and the server removes
 * leftovers at start, so the image leaves it out.
 */
async function crashImage(from: string, to: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      // Temp files are never data, and the lock socket is the running server's, not state.
      return await cp(from, to, {
        recursive: true,
        force: true,
        filter: (source) => !source.endsWith('.tmp') && !source.endsWith('.sock'),
      });
    } catch (err) {
      // A log file removed by a compaction while it was copied: take the image again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 5) throw err;
      await rm(to, { recursive: true, force: true });
    }
  }
}

describe('apiserver: dataDir (--data) durability', function () {
  this.timeout(20_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-data-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps objects, CRDs (served again) and moves the resourceVersion counter forward across restarts', async () => {
    const dataDir = join(dir, 'restart');
    const first = await startWithClients({ dataDir });
    await first.ext.createCustomResourceDefinition({ body: webPageCrd() });
    const page = (await first.custom.createNamespacedCustomObject({
      group: 'sample.rxkube.dev',
      version: 'v1',
      namespace: 'default',
      plural: 'webpages',
      body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'kept' }, spec: { title: 't' } },
    })) as { metadata: { uid: string; resourceVersion: string } };
    const rv = first.server.stats().resourceVersion;
    await first.server.close();

    const second = await startWithClients({ dataDir });
    try {
      const again = (await second.custom.getNamespacedCustomObject({
        group: 'sample.rxkube.dev',
        version: 'v1',
        namespace: 'default',
        plural: 'webpages',
        name: 'kept',
      })) as { metadata: { uid: string; resourceVersion: string } };
      expect(again.metadata).to.deep.include({ uid: page.metadata.uid, resourceVersion: page.metadata.resourceVersion });
      const cm = await second.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after-restart' } } });
      expect(Number(cm.metadata?.resourceVersion)).to.be.greaterThan(rv);
      // History did not survive: resuming a watch from before the restart is 410, so informers relist.
      const w = await RecordingWatch.start(second.kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: String(rv) });
      await w.waitFor((e) => e.length === 1, 'the ERROR event');
      expect(w.events[0]?.object).to.include({ code: 410 });
    } finally {
      await second.server.close();
    }
  });

  it('has every acknowledged write on disk when the answer arrives (a copy of the directory is a crash image)', async () => {
    const dataDir = join(dir, 'image');
    const server = await startApiServer({ dataDir, clientNode: false });
    const image = join(dir, 'image-copy');
    let seen = 0;
    try {
      for (let i = 0; i < 20; i++) seen = Number((await createConfigMap(server, `cm-${i}`)).metadata.resourceVersion);
      await crashImage(dataDir, image);
    } finally {
      await server.close();
    }
    const again = await startApiServer({ dataDir: image, clientNode: false });
    try {
      expect(await configMapNames(again)).to.have.members(Array.from({ length: 20 }, (_, i) => `cm-${i}`));
      expect(Number((await createConfigMap(again, 'next')).metadata.resourceVersion)).to.be.greaterThan(seen);
    } finally {
      await again.close();
    }
  });

  it('creates a missing directory 0700 with its files 0600', async () => {
    const dataDir = join(dir, 'modes', 'nested');
    const server = await startApiServer({ dataDir, clientNode: false });
    try {
      await createConfigMap(server, 'secretish');
      expect((await stat(dataDir)).mode & 0o777).to.equal(0o700);
      const files = await readdir(dataDir);
      expect(files).to.include('snapshot.json');
      for (const f of files) expect({ f, mode: (await stat(join(dataDir, f))).mode & 0o777 }).to.deep.equal({ f, mode: 0o600 });
    } finally {
      await server.close();
    }
  });

  it('removes temp files a crash left behind, and never opens a symlink in place of its files', async () => {
    const dataDir = join(dir, 'leftovers');
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, 'snapshot.json.0123abcd.tmp'), 'half a snapshot');
    const server = await startApiServer({ dataDir, clientNode: false });
    await server.close();
    expect((await readdir(dataDir)).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);

    // A temp or log file is created exclusively: a symlink planted at its name is refused, not followed.
    const victim = join(dir, 'victim');
    await writeFile(victim, 'untouched');
    await symlink(victim, join(dataDir, 'planted.tmp'));
    let err: unknown;
    await createExclusive(join(dataDir, 'planted.tmp')).then(
      (fh) => fh.close(),
      (e: unknown) => (err = e),
    );
    expect((err as NodeJS.ErrnoException).code).to.equal('EEXIST');
    await rm(join(dataDir, 'planted.tmp'));

    const snapshot = join(dataDir, 'snapshot.json');
    await rm(snapshot);
    await symlink(victim, snapshot);
    expect(await startError({ dataDir }))
      .to.contain(snapshot)
      .and.contain('ELOOP');
    expect(await readFile(victim, 'utf8')).to.equal('untouched');
  });

  it('tolerates a torn last log record, and refuses a log corrupt in the middle, naming the file', async () => {
    const dataDir = join(dir, 'torn');
    const server = await startApiServer({ dataDir, clientNode: false });
    const image = join(dir, 'torn-copy');
    try {
      await createConfigMap(server, 'before-the-tear');
      await crashImage(dataDir, image);
    } finally {
      await server.close();
    }
    const [wal] = await walFiles(image);
    const log = join(image, wal);
    const whole = encodeRecord({
      t: 'put',
      r: '/configmaps',
      o: { metadata: { name: 'torn', namespace: 'default', resourceVersion: '999999' } },
    });
    await appendFile(log, whole.subarray(0, whole.length - 5));
    const again = await startApiServer({ dataDir: image, clientNode: false });
    try {
      expect(await configMapNames(again))
        .to.include('before-the-tear')
        .and.not.include('torn');
    } finally {
      await again.close();
    }

    const corrupt = join(dir, 'corrupt');
    await cp(image, corrupt, { recursive: true });
    const [gen] = await walFiles(corrupt);
    const file = join(corrupt, gen);
    const rec = (name: string): Buffer =>
      encodeRecord({ t: 'put', r: '/configmaps', o: { metadata: { name, namespace: 'default', resourceVersion: '1' } } });
    const bad = rec('bad');
    bad[bad.length - 2] ^= 0xff;
    await appendFile(file, Buffer.concat([rec('good'), bad, rec('after')]));
    expect(await startError({ dataDir: corrupt }))
      .to.contain(file)
      .and.contain('corrupt');
  });

  it('compacts the log into a snapshot as it grows, keeping everything', async () => {
    const dataDir = join(dir, 'compact');
    const server = await startApiServer({ dataDir, clientNode: false, dataCompactBytes: 8 * 1024 });
    const image = join(dir, 'compact-copy');
    try {
      await Promise.all(Array.from({ length: 60 }, (_, i) => createConfigMap(server, `cm-${i}`, { payload: 'x'.repeat(200) })));
      await crashImage(dataDir, image);
      expect((await walFiles(dataDir)).length).to.be.at.most(2);
      expect(await stat(join(dataDir, 'wal-00000001.log')).catch(() => undefined)).to.equal(undefined);
    } finally {
      await server.close();
    }
    const again = await startApiServer({ dataDir: image, clientNode: false });
    try {
      expect(await configMapNames(again)).to.include.members(Array.from({ length: 60 }, (_, i) => `cm-${i}`));
    } finally {
      await again.close();
    }
  });

  it('rejects an unusable data directory at start, naming the path and the reason', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    expect(await startError({ dataDir: file }))
      .to.contain(file)
      .and.contain('not a directory');
    expect(await startError({ dataDir: join(file, 'below') }))
      .to.contain(join(file, 'below'))
      .and.contain('ENOTDIR');
    const bogus = join(dir, 'bogus');
    await mkdir(bogus);
    await writeFile(join(bogus, 'snapshot.json'), '{"hello": "world"}');
    expect(await startError({ dataDir: bogus }))
      .to.contain(join(bogus, 'snapshot.json'))
      .and.contain('not an rxkube apiserver snapshot');
    await truncate(join(bogus, 'snapshot.json'), 3);
    expect(await startError({ dataDir: bogus })).to.contain('not valid JSON');
  });
});

describe('apiserver: dataDir under a hostile or failing environment (issue 22)', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-data22-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('never answers 201 for a write the log holds only in part (a short write under a file-size limit), and keeps no such object after restart', async () => {
    const dataDir = join(dir, 'short');
    // 64 KiB per file: the log's first record fits, a 100 KB ConfigMap is cut short by the kernel.
    const limited = await serveDataInChild(dataDir, 'ulimit -f 64;');
    let status: number | string;
    try {
      const res = await fetch(`${limited.url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name: 'big' }, data: { v: 'x'.repeat(100_000) } }),
      });
      status = res.status;
    } catch (err) {
      status = String((err as Error).cause ?? err);
    } finally {
      limited.child.kill('SIGKILL');
      await limited.exited;
    }
    expect(status, limited.output()).to.not.equal(201);
    const again = await startApiServer({ dataDir, clientNode: false });
    try {
      expect(await configMapNames(again)).to.not.include('big');
    } finally {
      await again.close();
    }
  });

  it('refuses a log whose one length byte is damaged, naming the file, instead of dropping the records after it', async () => {
    const dataDir = join(dir, 'length');
    const server = await startApiServer({ dataDir, clientNode: false });
    const image = join(dir, 'length-copy');
    try {
      for (let i = 0; i < 9; i++) await createConfigMap(server, `cm-${i}`);
      await crashImage(dataDir, image);
    } finally {
      await server.close();
    }
    const [wal] = await walFiles(image);
    const file = join(image, wal);
    const log = await readFile(file);
    // The second record's length: its high byte made 1 (16 MiB more than the file holds).
    const second = log.readUInt32LE(0) + 8;
    log[second + 3] = 1;
    await writeFile(file, log);
    expect(await startError({ dataDir: image }))
      .to.contain(file)
      .and.contain('corrupt');
    expect(await readdir(image)).to.include(wal);
  });

  it('refuses an existing data directory or data file other users may write (mode 0777, a planted 0666 snapshot), naming the path and the mode', async () => {
    const open = join(dir, 'world-writable');
    await mkdir(open);
    await chmod(open, 0o777);
    await writeFile(
      join(open, 'snapshot.json'),
      JSON.stringify({ kind: 'RxkubeApiServerSnapshot', resourceVersion: 1, log: 0, objects: [] }),
    );
    const refused = await startError({ dataDir: open });
    expect(refused).to.contain(open).and.contain('writable by other users (mode 0777)');
    await chmod(open, 0o700);
    await chmod(join(open, 'snapshot.json'), 0o666);
    expect(await startError({ dataDir: open }))
      .to.contain(join(open, 'snapshot.json'))
      .and.contain('mode 0666');
    await chmod(join(open, 'snapshot.json'), 0o600);
    expect(await startError({ dataDir: open })).to.equal('started');
  });

  it('refuses a second server on a data directory in use, naming the process, and takes over the lock of a killed one', async () => {
    const dataDir = join(dir, 'locked');
    const first = await serveDataInChild(dataDir);
    try {
      const res = await fetch(`${first.url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name: 'acknowledged' } }),
      });
      expect(res.status).to.equal(201);
      const second = await startError({ dataDir });
      expect(second).to.contain(dataDir).and.contain(`in use by another server (process ${first.child.pid})`);
      expect(await walFiles(dataDir)).to.have.length(1);
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }
    const again = await startApiServer({ dataDir, clientNode: false });
    try {
      expect(await configMapNames(again)).to.include('acknowledged');
      expect(await startError({ dataDir })).to.contain(`process ${process.pid}, this one`);
    } finally {
      await again.close();
    }
    expect(await startError({ dataDir })).to.equal('started');
  });

  it('writes and reads back a snapshot of more than 512 MB of state (no one string of it all)', async function () {
    this.timeout(120_000);
    const dataDir = join(dir, 'large');
    // 540 objects sharing one 1 MB string: 540 MB of JSON, little memory until it is read back.
    const payload = 'x'.repeat(1_000_000);
    const objects = Array.from({ length: 540 }, (_, i) => ({
      resource: '/configmaps',
      object: { metadata: { name: `big-${i}`, namespace: 'default', resourceVersion: '7' }, data: { v: payload } },
    }));
    const first = await Journal.open(dataDir);
    first.journal.snapshotFrom(() => ({ resourceVersion: 7, objects }));
    await first.journal.close();
    expect((await stat(join(dataDir, 'snapshot.json'))).size).to.be.greaterThan(540_000_000);
    const again = await Journal.open(dataDir);
    try {
      expect(again.state.objects).to.have.length(540);
      const last = again.state.objects.find(
        (o) => o.object.metadata !== undefined && (o.object.metadata as { name: string }).name === 'big-539',
      );
      expect(((last?.object.data ?? {}) as { v: string }).v).to.have.length(1_000_000);
    } finally {
      await again.journal.close();
    }
  });
});
