// storegate: runs the platform (serve, worker, migrate) and administers it (stores, apps, seed...).
import { runProgram } from './program.ts';

process.exitCode = await runProgram(process.argv.slice(2));
