// Preloaded (`node --import`) into the server processes tests start on port 0: once the server's
// listening socket has its port, writes it as a line to the file descriptor REPORT_PORT_FD names,
// where the test that started the process reads it (server-process.ts). No port is chosen first and
// freed for the server to take again: the kernel gives one, and nothing else can have taken it.
import fs from 'node:fs';
import net from 'node:net';

const fd = Number(process.env.REPORT_PORT_FD);
if (Number.isInteger(fd) && fd > 2) {
  const listen = net.Server.prototype.listen;
  let reported = false;
  net.Server.prototype.listen = function listenAndReport(...args) {
    this.once('listening', () => {
      const address = this.address();
      if (reported || !address || typeof address !== 'object') return;
      reported = true;
      fs.writeSync(fd, `${address.port}\n`);
      fs.closeSync(fd);
    });
    return listen.apply(this, args);
  };
}
