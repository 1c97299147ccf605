// Baseline backend: a grpc-js server that echoes its request.
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const loader = require('@grpc/proto-loader');

const def = grpc.loadPackageDefinition(loader.loadSync(path.join(__dirname, 'echo.proto')));
const server = new grpc.Server();
server.addService(def.bench.Echo.service, { Echo: (call, cb) => cb(null, call.request) });
server.bindAsync(`127.0.0.1:${process.env.PORT}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
  process.send?.('ready');
});
