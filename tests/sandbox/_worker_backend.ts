/** The WorkerHost suite on the Worker backend; run by worker_test.ts with the unstable flag. */
import { workerSuite } from "./_worker_suite.ts";

workerSuite("worker");
