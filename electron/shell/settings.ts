import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as z from '../../shared/zod';

const SettingsSchema = z.object({
  lastFolder: z._default(z.nullable(z.string()), null),
  recent: z._default(z.array(z.string()), []),
  bounds: z._default(
    z.nullable(
      z.object({
        x: z.optional(z.number()),
        y: z.optional(z.number()),
        width: z.number(),
        height: z.number(),
      }),
    ),
    null,
  ),
  maximized: z._default(z.boolean(), false),
});
export type Settings = z.output<typeof SettingsSchema>;

/** Window and folder preferences in `<userData>/settings.json`; a damaged file falls back to defaults. */
export class SettingsStore {
  private readonly file: string;
  value: Settings;

  constructor(dir: string) {
    this.file = path.join(dir, 'settings.json');
    let raw: unknown = {};
    try {
      if (existsSync(this.file)) raw = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch {
      raw = {};
    }
    const parsed = SettingsSchema.safeParse(raw);
    this.value = parsed.success ? parsed.data : SettingsSchema.parse({});
  }

  update(patch: Partial<Settings>): void {
    this.value = { ...this.value, ...patch };
    mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.value, null, 2));
    renameSync(tmp, this.file);
  }

  remember(folder: string): void {
    this.update({
      lastFolder: folder,
      recent: [folder, ...this.value.recent.filter((f) => f !== folder)].slice(0, 10),
    });
  }
}
