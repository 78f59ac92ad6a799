// Validate Prometheus Operator objects (PodMonitor, ServiceMonitor, ...) offline against the
// schemas published on npm as @kubernetes-models/prometheus-operator, in two versions:
//   newest:  @kubernetes-models/prometheus-operator 6.0.0 (the operator's current API types)
//   oldest:  4.4.4, generated from the operator's v0.65.1 release CRDs (stripped-down-crds.yaml)
// Usage: node validate-prometheus-operator.mjs < objects.json   (a JSON array of objects)
// Prints one JSON line per object and schema; exits 1 when any object is invalid, 2 on misuse.
import { readFileSync } from "node:fs";

const SCHEMAS = [
  { label: "@kubernetes-models/prometheus-operator@6.0.0", pkg: "@kubernetes-models/prometheus-operator" },
  { label: "@kubernetes-models/prometheus-operator@4.4.4 (operator v0.65.1 CRDs)", pkg: "prometheus-operator-v0.65" },
];

async function modelClass(pkg, apiVersion, kind) {
  const module = await import(`${pkg}/${apiVersion}/${kind}`);
  return module[kind];
}

const objects = JSON.parse(readFileSync(0, "utf8"));
if (!Array.isArray(objects)) {
  console.error("expected a JSON array of objects on stdin");
  process.exit(2);
}
let failed = false;
for (const object of objects) {
  const { apiVersion = "", kind = "", metadata = {} } = object;
  if (!apiVersion.startsWith("monitoring.coreos.com/")) {
    console.error(`not a Prometheus Operator object: ${apiVersion} ${kind}`);
    process.exit(2);
  }
  for (const { label, pkg } of SCHEMAS) {
    const result = { kind, name: metadata.name, schema: label, ok: true, error: null };
    try {
      const Model = await modelClass(pkg, apiVersion, kind);
      new Model(object).validate();
    } catch (error) {
      result.ok = false;
      result.error = String(error && error.message ? error.message : error);
      failed = true;
    }
    console.log(JSON.stringify(result));
  }
}
process.exit(failed ? 1 : 0);
