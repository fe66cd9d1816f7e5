// The Electron main process: owns the service (ledger, runner, bundles) and one window whose
// renderer is untrusted and reaches the service only through the preload's contract surface.
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  protocol,
  session,
  shell,
  type IpcMainEvent,
  type IpcMainInvokeEvent,
  type MenuItemConstructorOptions,
} from 'electron';
import { existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { ProofloopService } from './service/service';
import { isPostgresUrl } from './ledger/open-engine';
import { startOtlpFor } from './otlp/start';
import { CSP } from './transports/csp';
import { forwardPushes, registerIpc } from './transports/ipc';
import { DROP_CHANNEL } from './transports/ipc-channels';
import { APP_ORIGIN, APP_SCHEME, serveAppRequest } from './shell/app-protocol';
import { SettingsStore } from './shell/settings';
import { openDefaultFolder } from './shell/first-run';
import { appRoot } from './paths';
import { goLean } from './lean';

// The UI is served from app://proofloop/, not file://: a file: page would be same-origin with
// every file on the disk, and the fuse GrantFileProtocolExtraPrivileges is off (electron-builder.yml).
const rendererDir = path.join(appRoot(), 'dist', 'renderer');
const rendererUrl = `${APP_ORIGIN}/index.html`;
protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
]);
const preloadFile = path.join(appRoot(), 'dist', 'electron', 'preload.cjs');

let win: BrowserWindow | null = null;
// A team ledger's runs keep their workspaces and artifacts in the app's own folder.
const service = new ProofloopService({ watch: true, teamFolder: path.join(app.getPath('userData'), 'team') });
const settings = new SettingsStore(app.getPath('userData'));

function isTrustedSender(e: IpcMainInvokeEvent): boolean {
  const frame = e.senderFrame;
  return Boolean(
    win &&
    e.sender === win.webContents &&
    frame &&
    frame === win.webContents.mainFrame &&
    frame.url.startsWith(`${APP_ORIGIN}/`),
  );
}

/**
 * A folder dropped on the window: the preload reads its path from the trusted drop event
 * (webUtils.getPathForFile) and sends it here. A renderer can send any path, so the path alone
 * opens nothing: it must be an existing directory, not a link, and the user confirms it in a
 * native dialog the page cannot draw or click.
 */
async function onDropped(e: IpcMainEvent, dropped: unknown): Promise<void> {
  if (!win || e.sender !== win.webContents || e.senderFrame !== win.webContents.mainFrame) return;
  if (
    typeof dropped !== 'string' ||
    dropped.length === 0 ||
    dropped.length > 4096 ||
    !path.isAbsolute(dropped)
  )
    return;
  const st = lstatSync(dropped, { throwIfNoEntry: false });
  if (!st || st.isSymbolicLink() || !st.isDirectory()) return;
  const r = await dialog.showMessageBox(win, {
    type: 'question',
    buttons: ['Open', 'Cancel'],
    defaultId: 0,
    cancelId: 1,
    message: 'Open this folder as a runs folder?',
    detail: dropped,
  });
  if (r.response === 0) await openFolder(dropped);
}

async function openFolder(folder: string): Promise<void> {
  try {
    // In the background: the window shows the runs and rows as the import commits them.
    const info = await service.openFolder(folder, { background: true });
    settings.remember(info.folder);
    service.ctx.emit('folder.changed', { folder: info.folder });
    buildMenu();
  } catch (e) {
    dialog.showErrorBox('Cannot open folder', (e as Error).message);
  }
}

/**
 * A recent team ledger, by its URL without a password: the server may take it from ~/.pgpass;
 * else the window's "Open team ledger…" form asks for it.
 */
async function openTeam(url: string): Promise<void> {
  try {
    const info = await service.openTeam(url);
    settings.remember(info.folder);
    service.ctx.emit('folder.changed', { folder: info.folder });
    buildMenu();
  } catch {
    service.ctx.emit('ui.command', { command: 'open-team-ledger' });
  }
}

async function chooseFolder(): Promise<void> {
  if (!win) return;
  const r = await dialog.showOpenDialog(win, {
    title: 'Open runs folder',
    properties: ['openDirectory', 'createDirectory'],
  });
  if (!r.canceled && r.filePaths[0]) await openFolder(r.filePaths[0]);
}

function buildMenu(): void {
  // A team ledger is remembered by its URL without a password (ProofloopService.openTeam).
  const recent: MenuItemConstructorOptions[] = settings.value.recent.map((f) => ({
    label: f,
    click: () => void (isPostgresUrl(f) ? openTeam(f) : openFolder(f)),
  }));
  const template: MenuItemConstructorOptions[] = [
    {
      label: 'File',
      submenu: [
        { label: 'Open Folder…', accelerator: 'CmdOrCtrl+O', click: () => void chooseFolder() },
        {
          label: 'Open Team Ledger…',
          click: () => service.ctx.emit('ui.command', { command: 'open-team-ledger' }),
        },
        {
          label: 'Open Recent',
          submenu: recent.length ? recent : [{ label: 'No recent folders', enabled: false }],
        },
        { type: 'separator' },
        {
          label: 'Export Bundle…',
          accelerator: 'CmdOrCtrl+E',
          click: () => service.ctx.emit('ui.command', { command: 'export-bundle' }),
        },
        { type: 'separator' },
        { role: 'quit' },
      ],
    },
    {
      label: 'View',
      submenu: [
        { role: 'reload' },
        { role: 'toggleDevTools' },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    {
      label: 'Help',
      submenu: [
        {
          label: 'Keyboard: ←/→ step, Shift+→ next notable, g go to seq, / search, f filter',
          enabled: false,
        },
        { label: 'Open README', click: () => void shell.openPath(path.join(appRoot(), 'README.md')) },
      ],
    },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}

function createWindow(): void {
  const b = settings.value.bounds;
  win = new BrowserWindow({
    width: b?.width ?? 1400,
    height: b?.height ?? 900,
    x: b?.x,
    y: b?.y,
    title: 'ProofLoop',
    show: false,
    webPreferences: {
      preload: preloadFile,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  if (settings.value.maximized) win.maximize();
  win.once('ready-to-show', () => win?.show());
  const saveBounds = () => {
    if (!win || win.isDestroyed()) return;
    settings.update({ bounds: win.getNormalBounds(), maximized: win.isMaximized() });
  };
  win.on('resize', saveBounds);
  win.on('move', saveBounds);
  win.on('close', saveBounds);
  win.on('closed', () => (win = null));

  // Nothing navigates away from the app, in any frame, by link, location, form or redirect: a
  // navigation opens nothing (a dropped folder comes through the preload's drop event instead).
  const refuse = (event: { preventDefault(): void }) => event.preventDefault();
  win.webContents.on('will-navigate', refuse);
  win.webContents.on('will-frame-navigate', refuse);
  win.webContents.on('will-redirect', refuse);
  win.webContents.on('will-attach-webview', refuse);
  win.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  void win.loadURL(rendererUrl);
}

async function main(): Promise<void> {
  // The app serves one page for hours; its large jobs run in worker threads (lean.ts).
  goLean();
  await app.whenReady();
  session.defaultSession.webRequest.onHeadersReceived((details, cb) => {
    cb({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CSP] } });
  });
  session.defaultSession.setPermissionRequestHandler((_wc, _perm, cb) => cb(false));
  protocol.handle(APP_SCHEME, (req) => serveAppRequest(rendererDir, req.url));
  ipcMain.on(DROP_CHANNEL, (e, dropped: unknown) => void onDropped(e, dropped));
  for (const f of [...settings.value.recent].reverse()) if (existsSync(f)) service.trustFolder(f);
  registerIpc(service, isTrustedSender);
  forwardPushes(service, () => win?.webContents ?? null);
  const argFolder = process.argv
    .slice(app.isPackaged ? 1 : 2)
    .find((a) => !a.startsWith('-') && existsSync(a));
  const folder =
    argFolder ??
    (settings.value.lastFolder && existsSync(settings.value.lastFolder) ? settings.value.lastFolder : null);
  try {
    if (folder) await service.openFolder(folder, { background: true });
    else await openDefaultFolder(service, path.join(app.getPath('userData'), 'runs'));
    settings.remember(service.ctx.folder());
  } catch (e) {
    dialog.showErrorBox('ProofLoop', (e as Error).message);
  }
  buildMenu();
  createWindow();
  // OTLP/HTTP on 127.0.0.1:4318 into the open folder (a port already taken is skipped, not fatal).
  const otlp = await startOtlpFor(service);
  app.on('will-quit', () => void otlp.receiver?.close());
  app.on('window-all-closed', () => app.quit());
}

void main();
