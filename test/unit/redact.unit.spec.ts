import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  CREDENTIAL_DETECTORS,
  createRedactor,
  parseJsonPath,
  parseRedactRules,
  redactCredentials,
  scanForSecrets,
  SHARE_DETECTORS,
} from '../../shared/redact';

// Fake secrets, built by concatenation so that no scanner takes this file for a leak.
const FAKE = {
  aws_access_key_id: 'AKIA' + 'TESTFAKE' + '12345678',
  aws_secret_access_key: 'fAkE/' + 'Secret+Key'.repeat(3) + 'TEST0',
  github_token: 'ghp_' + 'A1b2C3d4'.repeat(4) + 'E5f6',
  github_pat: 'github_pat_' + '11ABCDEFG0'.repeat(2) + '12_' + 'x'.repeat(59),
  anthropic_api_key: 'sk-ant-' + 'api03-' + 'FakeFake'.repeat(5),
  openai_api_key: 'sk-proj-' + 'FakeFake_'.repeat(5),
  sk_api_key: 'sk-' + '0123456789abcdef'.repeat(2),
  slack_token: 'xoxb-' + '123456789012-' + 'fakefakefake',
  slack_webhook_path: 'services/' + 'T00000000/B00000000/' + 'X'.repeat(24),
  stripe_key: 'sk_' + 'live_' + 'FakeFake0'.repeat(3),
  google_api_key: 'AIza' + 'Sy' + 'F'.repeat(33),
  npm_token: 'npm_' + 'f4k3'.repeat(9),
  private_key_body: 'b3BlbnNzaC1rZXktdjEAAAAA' + 'FAKEFAKE'.repeat(6),
  jwt: 'eyJhbGciOiJIUzI1NiJ9' + '.' + 'eyJzdWIiOiJmYWtlLXVzZXIifQ' + '.' + 'ZmFrZS1zaWduYXR1cmUtZmFrZQ',
  bearer: 'fake' + 'BearerToken0123456789',
  authorization: 'Basic ' + 'ZmFrZXVzZXI6ZmFrZXBhc3M=',
  url_password: 'fake' + 'Pw0rd!x',
  assigned_password: 'hunter' + '2fake',
  assigned_api_key: 'fakeApi' + 'Key9876',
  cookie: 'session=' + 'fakecookie123',
};

const PEM = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  FAKE.private_key_body,
  FAKE.private_key_body.split('').reverse().join(''),
  '-----END OPENSSH PRIVATE KEY-----',
].join('\n');
const RSA_PEM = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEfake' + 'A'.repeat(40),
  '-----END RSA PRIVATE KEY-----',
].join('\n');

const SHA256 = createHash('sha256').update('x').digest('hex');
const GIT_SHA = createHash('sha1').update('y').digest('hex');
const UUID = '123e4567-e89b-12d3-a456-426614174000';
const ISO = '2026-11-29T08:00:00.000Z';
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** A payload with a credential of every kind, in tool output, patches, model text, keys, arrays. */
function plantedPayload(): Record<string, unknown> {
  return {
    call_id: 'call-1',
    tool: 'bash',
    args: {
      cmd: `curl -H "Authorization: ${FAKE.authorization}" https://api.example.com`,
      env: ['HOME=/tmp', `NPM_TOKEN=${FAKE.npm_token}`],
      nested: { deeper: [{ note: `use ${FAKE.github_token} for the push` }] },
    },
    result: {
      stdout: `AWS_ACCESS_KEY_ID=${FAKE.aws_access_key_id}\naws_secret_access_key = ${FAKE.aws_secret_access_key}\n`,
      stderr: `warning: key file contains\n${PEM}\nend`,
    },
    patch: [
      '--- a/.env',
      '+++ b/.env',
      `+OPENAI_API_KEY="${FAKE.openai_api_key}"`,
      `+ANTHROPIC=${FAKE.anthropic_api_key}`,
      `+DEEPSEEK ${FAKE.sk_api_key}`,
      `+STRIPE=${FAKE.stripe_key}`,
      `+GOOGLE=${FAKE.google_api_key}`,
      `+DATABASE_URL=postgres://app:${FAKE.url_password}@db.internal:5432/app`,
      `+db_password=${FAKE.assigned_password}`,
    ].join('\n'),
    content:
      `Here is the fine-grained token ${FAKE.github_pat} and the slack bot ${FAKE.slack_token}; ` +
      `webhook https://hooks.slack.com/${FAKE.slack_webhook_path} and session ${FAKE.jwt}.`,
    messages: [
      { role: 'user', text: `Authorization: Bearer ${FAKE.bearer}` },
      { text: `api_key: ${FAKE.assigned_api_key}` },
    ],
    headers: { 'Set-Cookie': [FAKE.cookie], cookie: FAKE.cookie },
    more: { rsa: RSA_PEM },
  };
}

describe('redactCredentials: every detector kind', () => {
  const out = redactCredentials(plantedPayload());
  const json = JSON.stringify(out.value);

  it('removes every planted secret from the output', () => {
    for (const [name, secret] of Object.entries(FAKE)) {
      expect(json.includes(secret), `${name} still present`).toBe(false);
    }
    expect(json).not.toContain('PRIVATE KEY');
    expect(out.hits).toBeGreaterThanOrEqual(20);
  });

  it('uses the right placeholder per kind', () => {
    const v = out.value as ReturnType<typeof plantedPayload>;
    const args = v.args as { cmd: string; env: string[]; nested: { deeper: { note: string }[] } };
    expect(args.cmd).toBe(
      'curl -H "Authorization: Basic [REDACTED:authorization_header#1]" https://api.example.com',
    );
    expect(args.env[1]).toBe('NPM_TOKEN=[REDACTED:npm_token#1]');
    expect(args.nested.deeper[0]!.note).toBe('use [REDACTED:github_token#1] for the push');
    const result = v.result as { stdout: string; stderr: string };
    expect(result.stdout).toBe(
      'AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id#1]\naws_secret_access_key = [REDACTED:aws_secret_access_key#1]\n',
    );
    expect(result.stderr).toBe('warning: key file contains\n[REDACTED:private_key#1]\nend');
    const patch = v.patch as string;
    expect(patch).toContain('+OPENAI_API_KEY="[REDACTED:openai_api_key#1]"');
    expect(patch).toContain('+ANTHROPIC=[REDACTED:anthropic_api_key#1]');
    expect(patch).toContain('+DEEPSEEK [REDACTED:sk_api_key#1]');
    expect(patch).toContain('+STRIPE=[REDACTED:stripe_key#1]');
    expect(patch).toContain('+GOOGLE=[REDACTED:google_api_key#1]');
    expect(patch).toContain('postgres://app:[REDACTED:url_password#1]@db.internal:5432/app');
    expect(patch).toContain('+db_password=[REDACTED:secret_assignment#1]');
    const content = v.content as string;
    expect(content).toContain('[REDACTED:github_token#2]');
    expect(content).toContain('[REDACTED:slack_token#1]');
    expect(content).toContain('https://hooks.slack.com/[REDACTED:slack_webhook#1]');
    expect(content).toContain('[REDACTED:jwt#1]');
    const messages = v.messages as { text: string }[];
    expect(messages[0]!.text).toBe('Authorization: Bearer [REDACTED:authorization_header#2]');
    expect(messages[1]!.text).toBe('api_key: [REDACTED:secret_assignment#2]');
    const headers = v.headers as { 'Set-Cookie': string[]; cookie: string };
    expect(headers['Set-Cookie']).toEqual(['[REDACTED:sensitive_key#1]']);
    expect(headers.cookie).toBe('[REDACTED:sensitive_key#1]');
    expect((v.more as { rsa: string }).rsa).toBe('[REDACTED:private_key#2]');
  });

  it('replaces only the password of a URL and keeps the user and host', () => {
    const r = redactCredentials({
      url: `redis://:${FAKE.url_password}@cache:6379/0 and https://me:${FAKE.url_password}@x.org`,
    });
    expect(r.value.url).toBe(
      'redis://:[REDACTED:url_password#1]@cache:6379/0 and https://me:[REDACTED:url_password#1]@x.org',
    );
  });

  it('catches a bearer token on its own and a truncated private key', () => {
    const r = redactCredentials({
      log: `sent bearer ${FAKE.bearer}`,
      excerpt: `-----BEGIN PRIVATE KEY-----\nMIIEvAIBADANBgkqhkiG9w0BAQEFAASC${'Q'.repeat(30)}`,
    });
    expect(r.value.log).toBe('sent bearer [REDACTED:bearer_token#1]');
    expect(r.value.excerpt).toBe('[REDACTED:private_key#1]');
  });

  it('replaces whole values under secret-named keys, in any case and separator', () => {
    const r = redactCredentials({
      api_key: 'k1-value',
      apiKey: 'k2-value',
      'X-Api-Key': 'k3-value',
      access_token: 'k4-value',
      client_secret: 'k5-value',
      Authorization: 'Bearer xyz',
      privateKey: 'k6-value',
      PASSWD: 'k7-value',
      secret: 'k8-value',
    });
    for (const v of Object.values(r.value)) expect(v).toMatch(/^\[REDACTED:sensitive_key#\d\]$/);
  });

  it('gives the same value the same placeholder, and numbers per call deterministically', () => {
    const payload = {
      a: `x ${FAKE.github_token}`,
      b: [FAKE.github_token],
      c: { d: `${FAKE.github_token}!` },
    };
    const r1 = redactCredentials(payload);
    expect(JSON.stringify(r1.value).match(/\[REDACTED:github_token#1\]/g)).toHaveLength(3);
    expect(JSON.stringify(r1.value)).not.toContain('#2');
    expect(redactCredentials(payload)).toEqual(r1);
  });

  it('never mutates its input', () => {
    const payload = deepFreeze(plantedPayload());
    const before = JSON.stringify(payload);
    const r = redactCredentials(payload);
    expect(JSON.stringify(payload)).toBe(before);
    expect(r.value).not.toBe(payload);
  });

  it('returns the input itself when nothing is redacted', () => {
    const payload = { a: 1, b: ['x', { c: 'plain text' }] };
    const r = redactCredentials(payload);
    expect(r.value).toBe(payload);
    expect(r.hits).toBe(0);
  });

  it('handles scalars, null and keys named __proto__ safely', () => {
    expect(redactCredentials(null)).toEqual({ value: null, hits: 0 });
    expect(redactCredentials(42).value).toBe(42);
    expect(redactCredentials(`t ${FAKE.npm_token}`).value).toBe('t [REDACTED:npm_token#1]');
    const hostile = JSON.parse(`{"__proto__": {"token": "abc-def"}, "x": 1}`) as Record<string, unknown>;
    const r = redactCredentials(hostile).value as Record<string, unknown>;
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(JSON.stringify(r)).toBe('{"__proto__":{"token":"[REDACTED:sensitive_key#1]"},"x":1}');
  });
});

describe('any JSON value', () => {
  it('is redacted without throwing, without mutation, idempotently', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const before = JSON.stringify(v);
        const once = createRedactor('share', { sha256 }).redactValue(v);
        expect(JSON.stringify(v)).toBe(before);
        expect(createRedactor('share', { sha256 }).redactValue(once.value).changed).toBe(false);
        expect(redactCredentials(v).value === v).toBe(redactCredentials(v).hits === 0);
      }),
      { numRuns: 300 },
    );
  });
});

describe('benign look-alikes are untouched', () => {
  const benign = {
    hash: SHA256,
    prev: '0'.repeat(64),
    digest: SHA256,
    output_digest: SHA256,
    commit: GIT_SHA,
    id: UUID,
    at: ISO,
    tokens: 1234,
    token_count: 99,
    max_tokens: 4096,
    tokens_before: 10,
    tokens_after: 12,
    token_type: 'bearer',
    budget: { tokens: 50_000, steps: 20 },
    prose: 'The token budget was exhausted; enter your password to continue. Bearer tokens expire.',
    version: 'semver 1.2.3 and v10.0.19041 and node 20.19.0',
    text: `commit ${GIT_SHA} at ${ISO} digest sha256:${SHA256} run ${UUID}`,
    code: 'const token = getToken();\nif (password === undefined) return;\nconst tokens = count(x);',
    env: 'password=$DB_PASSWORD token=${TOKEN} secret: null',
    task: 'task-0123456789abcdefghijklmnop',
    path: 'src/auth/token.ts',
    time: '08:00:00 and 12:30',
    token: SHA256,
    blob: 'random base64 ' + 'Zm9v' + 'YmFy+/'.repeat(6) + ' not near an AWS key name',
  };

  it('credentials profile leaves them as they are', () => {
    const r = redactCredentials(benign);
    expect(r.hits).toBe(0);
    expect(r.value).toBe(benign);
  });

  it('share profile leaves them as they are too', () => {
    const r = createRedactor('share', { sha256 }).redactValue(benign);
    expect(r.changed).toBe(false);
    expect(r.value).toEqual(benign);
  });

  it('scanForSecrets finds nothing in them', () => {
    expect(scanForSecrets(JSON.stringify(benign))).toEqual([]);
  });
});

describe('share profile', () => {
  it('catches e-mails, IPv4/IPv6 addresses and home paths, keeps versions and loopback', () => {
    const r = createRedactor('share');
    const out = r.redactValue({
      log: 'from alice@example.org to bob.smith+x@mail.example.co.uk via 10.1.2.3 and 2001:db8::8a2e:370:7334',
      paths: ['/home/alice/project/a.ts', '/Users/bob/src', 'C:\\Users\\Carol\\repo', 'file:///home/alice/x'],
      keep: 'version 1.2.3, 127.0.0.1, ::1, 08:00:00, https://site.example/home/about',
    }).value;
    const json = JSON.stringify(out);
    for (const s of [
      'alice@example.org',
      'bob.smith',
      '10.1.2.3',
      '2001:db8::8a2e:370:7334',
      'alice',
      'bob',
      'Carol',
    ]) {
      expect(json).not.toContain(s);
    }
    expect(out.log).toBe(
      'from [REDACTED:email#1] to [REDACTED:email#2] via [REDACTED:ipv4#1] and [REDACTED:ipv6#1]',
    );
    expect(out.paths).toEqual([
      '/home/[REDACTED:home_path#1]/project/a.ts',
      '/Users/[REDACTED:home_path#2]/src',
      'C:\\Users\\[REDACTED:home_path#3]\\repo',
      'file:///home/[REDACTED:home_path#1]/x',
    ]);
    expect(out.keep).toBe('version 1.2.3, 127.0.0.1, ::1, 08:00:00, https://site.example/home/about');
    expect(r.counts()).toEqual({ email: 2, home_path: 4, ipv4: 1, ipv6: 1 });
  });

  it('also applies every credential detector', () => {
    const out = createRedactor('share', { sha256 }).redactValue(plantedPayload()).value;
    const json = JSON.stringify(out);
    for (const [name, secret] of Object.entries(FAKE)) expect(json.includes(secret), name).toBe(false);
  });

  it('reduces long full-text fields to a digest and a length', () => {
    const long = 'lorem ipsum '.repeat(30);
    const out = createRedactor('share', { sha256 }).redactValue({
      content: long,
      output: 'short output',
      stdout: [long],
      note: long,
    }).value;
    expect(out.content).toEqual({ redacted: 'full_text', sha256: sha256(long), length: long.length });
    expect(out.stdout).toEqual([{ redacted: 'full_text', sha256: sha256(long), length: long.length }]);
    expect(out.output).toBe('short output');
    expect(out.note).toBe(long);
    const noHasher = createRedactor('share').redactValue({ prompt: long }).value;
    expect(noHasher.prompt).toEqual({ redacted: 'full_text', length: long.length });
  });

  it('keeps placeholders stable across events of one redactor (one bundle)', () => {
    const r = createRedactor('share');
    const a = r.redactValue({ x: `${FAKE.github_token} alice@example.org` }).value;
    const b = r.redactValue({ y: `${FAKE.npm_token} ${FAKE.github_token}`, z: 'carol@example.org' }).value;
    const c = r.redactValue({ w: 'alice@example.org' }).value;
    expect(a.x).toBe('[REDACTED:github_token#1] [REDACTED:email#1]');
    expect(b.y).toBe('[REDACTED:npm_token#1] [REDACTED:github_token#1]');
    expect(b.z).toBe('[REDACTED:email#2]');
    expect(c.w).toBe('[REDACTED:email#1]');
    expect(r.counts()).toEqual({ email: 3, github_token: 2, npm_token: 1 });
  });

  it('redacts secrets in object keys', () => {
    const out = createRedactor('share').redactValue({
      'alice@example.org': { [FAKE.github_token]: 1 },
    }).value;
    expect(out).toEqual({ '[REDACTED:email#1]': { '[REDACTED:github_token#1]': 1 } });
  });

  it('is idempotent: redacting a redacted value changes nothing', () => {
    const once = createRedactor('share', { sha256 }).redactValue(plantedPayload()).value;
    const twice = createRedactor('share', { sha256 }).redactValue(once);
    expect(twice.changed).toBe(false);
  });
});

describe('user rules', () => {
  const rulesText = JSON.stringify({
    rules: [
      { name: 'customer ids', pattern: 'CUST-\\d{6}' },
      { name: 'query', paths: ['$.payload.args.query'] },
      { name: 'ssn', keys: ['ssn'], action: 'drop' },
      { name: 'internal host', pattern: 'corp\\.internal', flags: 'i', keys: ['host'], action: 'drop' },
      { name: 'order', pattern: 'ORD\\d+', paths: ['payload.items[*].ref'] },
    ],
    allow: ['CUST-000000', 're:^bot@example\\.org$'],
  });

  it('parses a valid file', () => {
    const rules = parseRedactRules(rulesText, 'redact.json');
    expect(rules.rules).toHaveLength(5);
    expect(rules.allow).toEqual(['CUST-000000', 're:^bot@example\\.org$']);
  });

  it('masks patterns, keys and paths, drops fields, honours allow', () => {
    const r = createRedactor('share', { rules: parseRedactRules(rulesText, 'redact.json') });
    const event = deepFreeze({
      seq: 3,
      payload: {
        args: { query: 'select * from customers', other: 'CUST-123456 and CUST-000000 and CUST-123456' },
        user: { ssn: '000-00-0000', host: 'db.CORP.internal', name: 'x' },
        items: [{ ref: 'ORD42 ok' }, { ref: 'x', note: 'ORD43' }],
        mail: 'bot@example.org, eve@example.org',
      },
    });
    const out = r.redactValue(event).value;
    expect(out.payload.args.query).toBe('[REDACTED:query#1]');
    expect(out.payload.args.other).toBe(
      '[REDACTED:customer_ids#1] and CUST-000000 and [REDACTED:customer_ids#1]',
    );
    expect(out.payload.user).toEqual({ name: 'x' });
    expect(out.payload.items).toEqual([{ ref: '[REDACTED:order#1] ok' }, { ref: 'x', note: 'ORD43' }]);
    expect(out.payload.mail).toBe('bot@example.org, [REDACTED:email#1]');
    expect(r.counts()).toMatchObject({
      customer_ids: 2,
      query: 1,
      ssn: 1,
      internal_host: 1,
      order: 1,
      email: 1,
    });
  });

  it('matches paths relative to the context path', () => {
    const r = createRedactor('credentials', { rules: parseRedactRules(rulesText, 'redact.json') });
    const out = r.redactValue({ args: { query: 'q' } }, { path: ['payload'] }).value;
    expect(out.args.query).toBe('[REDACTED:query#1]');
  });

  it('allow keeps a credential-looking value too', () => {
    const rules = parseRedactRules(JSON.stringify({ rules: [], allow: [FAKE.npm_token] }), 'redact.json');
    const out = createRedactor('credentials', { rules }).redactValue({ a: `x ${FAKE.npm_token}` }).value;
    expect(out.a).toBe(`x ${FAKE.npm_token}`);
  });

  it('parses JSON paths', () => {
    expect(parseJsonPath('payload.args.query')).toEqual(['payload', 'args', 'query']);
    expect(parseJsonPath('$.payload.items[0].x')).toEqual(['payload', 'items', '0', 'x']);
    expect(parseJsonPath('a[*]["b.c"]')).toEqual(['a', '*', 'b.c']);
    expect(parseJsonPath('a..b')).toBeNull();
    expect(parseJsonPath('$')).toBeNull();
  });

  const bad = (file: unknown): (() => void) => {
    return () => parseRedactRules(typeof file === 'string' ? file : JSON.stringify(file), 'redact.json');
  };

  it('names the file, rule and field of an error', () => {
    expect(
      bad({
        rules: [
          { name: 'a', pattern: 'x' },
          { name: 'customer ids', pattern: 'CUST-(' },
        ],
      }),
    ).toThrow(/^redact\.json: rule 2 \("customer ids"\): pattern: invalid regular expression: /);
    expect(bad({ rules: [{ name: 'a', keys: 'ssn' }] })).toThrow(/^redact\.json: rule 1 \("a"\): keys: /);
    expect(bad({ rules: [{ name: 'a', pattern: 'x', action: 'erase' }] })).toThrow(
      /^redact\.json: rule 1 \("a"\): action: /,
    );
    expect(bad({ rules: [{ name: 'a', pattern: 'x', flags: 'g' }] })).toThrow(
      /^redact\.json: rule 1 \("a"\): flags: /,
    );
    expect(bad({ rules: [{ name: 'a', patern: 'x' }] })).toThrow(
      /^redact\.json: rule 1 \("a"\): unknown field\(s\) "patern"/,
    );
    expect(bad({ rules: [{ name: 'only name' }] })).toThrow(
      /^redact\.json: rule 1 \("only name"\): needs at least one of pattern, keys, paths/,
    );
    expect(bad({ rules: [{ name: 'p', paths: ['a..b'] }] })).toThrow(
      /^redact\.json: rule 1 \("p"\): paths\[0\]: invalid JSON path/,
    );
    expect(bad({ rules: [{ name: 'e', pattern: 'a*' }] })).toThrow(
      /rule 1 \("e"\): pattern: matches the empty string/,
    );
    expect(bad({ rules: [{ pattern: 'x' }] })).toThrow(/^redact\.json: rule 1: name: /);
    expect(
      bad({
        rules: [
          { name: 'd', pattern: 'x' },
          { name: 'd', keys: ['k'] },
        ],
      }),
    ).toThrow(/rule 2 \("d"\): name: duplicate/);
    expect(bad({ rules: [], allow: ['re:('] })).toThrow(
      /^redact\.json: allow\[0\]: invalid regular expression/,
    );
    expect(bad({ rule: [] })).toThrow(/^redact\.json: /);
    expect(bad('{ nope')).toThrow(/^redact\.json: invalid JSON/);
  });
});

describe('scanForSecrets', () => {
  const KINDS: Record<string, string> = {
    aws_access_key_id: `id ${FAKE.aws_access_key_id}`,
    aws_secret_access_key: `AWS_SECRET_ACCESS_KEY=${FAKE.aws_secret_access_key}`,
    github_token: `t ${FAKE.github_pat}`,
    anthropic_api_key: FAKE.anthropic_api_key,
    openai_api_key: FAKE.openai_api_key,
    sk_api_key: FAKE.sk_api_key,
    slack_token: FAKE.slack_token,
    slack_webhook: `https://hooks.slack.com/${FAKE.slack_webhook_path}`,
    stripe_key: FAKE.stripe_key,
    google_api_key: FAKE.google_api_key,
    npm_token: FAKE.npm_token,
    private_key: PEM,
    jwt: FAKE.jwt,
    bearer_token: `bearer ${FAKE.bearer}`,
    authorization_header: `"authorization":"${FAKE.authorization}"`,
    url_password: `mysql://root:${FAKE.url_password}@h/db`,
    secret_assignment: `{"password":"${FAKE.assigned_password}"}`,
  };

  it('has a case for every credential detector', () => {
    expect(Object.keys(KINDS).sort()).toEqual(CREDENTIAL_DETECTORS.map((d) => d.id).sort());
  });

  it('finds each kind', () => {
    for (const [rule, text] of Object.entries(KINDS)) {
      const found = scanForSecrets(`prefix ${text} suffix`);
      expect(
        found.map((f) => f.rule),
        rule,
      ).toContain(rule);
    }
  });

  it('reports the offset of the secret', () => {
    const text = `abc ${FAKE.npm_token}`;
    expect(scanForSecrets(text)).toEqual([{ rule: 'npm_token', index: 4 }]);
  });

  it('ignores placeholders and whatever a redactor produced', () => {
    const placeholders = CREDENTIAL_DETECTORS.map(
      (d) => `x=[REDACTED:${d.id}#1] password: [REDACTED:${d.id}#2]`,
    );
    expect(scanForSecrets(placeholders.join('\n'))).toEqual([]);
    const r = createRedactor('share', { sha256 });
    const lines = [plantedPayload(), KINDS].map((p) => JSON.stringify(r.redactValue(p).value)).join('\n');
    expect(scanForSecrets(lines)).toEqual([]);
    const raw = [plantedPayload(), KINDS].map((p) => JSON.stringify(p)).join('\n');
    expect(scanForSecrets(raw).length).toBeGreaterThan(20);
  });
});

describe('ipv6 trigger', () => {
  // The trigger was rewritten to start at a ':' (8x faster on hash-heavy output); it must match
  // exactly where the original did, or the detector could be skipped on a text it fires on.
  const ORIGINAL = /::|(?:[0-9A-Fa-f]{1,4}:){7}/;
  const ipv6 = [...CREDENTIAL_DETECTORS, ...SHARE_DETECTORS].find((d) => d.id === 'ipv6')!;
  const piece = fc.oneof(
    fc.constantFrom(':', '::', 'fe80', '2001', 'db8', '0', 'a', 'G', ' ', '.', '"', '\n', '08:00:00'),
    fc.stringMatching(/^[0-9a-fA-F]{1,5}$/),
    fc.string({ maxLength: 4 }),
  );
  it('matches the same texts as the original', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(ipv6.trigger.test(text)).toBe(ORIGINAL.test(text));
      }),
      { numRuns: 5000 },
    );
    for (const t of [
      '1:2:3:4:5:6:7:8',
      'x1:2:3:4:5:6:7:',
      '::1',
      'ab:cd',
      '12345:1:2:3:4:5:6:7',
      'a:b:c:d:e:f:0:',
    ]) {
      expect(ipv6.trigger.test(t), t).toBe(ORIGINAL.test(t));
    }
  });
  it('never lets the detector fire on a text it does not match', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        if (scanForSecrets(text, [{ ...ipv6, trigger: /(?:)/ }]).length > 0)
          expect(ipv6.trigger.test(text)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });
});
