// jest globalTeardown: stops what engines-setup.js started (embedded PostgreSQL, redis-server).
module.exports = require('./engines-setup').globalTeardown;
