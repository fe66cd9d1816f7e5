'use strict';
// A "benchmark" that never finishes in time: it sleeps far beyond any tool timeout and starts a
// grandchild too, so a timeout must kill the whole process group. Both pids go to .slow-pids.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
fs.writeFileSync('.slow-pids', `${process.pid} ${child.pid}\n`);
console.log('benchmark: warming up…');
const parent = process.ppid;
// Exit on our own if the host that started us is gone (it was SIGKILLed): no orphans for a minute.
setInterval(() => {
  if (process.ppid !== parent) {
    child.kill('SIGKILL');
    process.exit(1);
  }
}, 200);
setTimeout(() => process.exit(0), 60000);
