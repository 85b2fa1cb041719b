// "New build": a simulated profile, an ONNX model in a model root or an uploaded model
// (a select of GET /models, sent as "models:NAME") with its options, sent as
// POST /builds; on success the page follows the new build.
import { api } from "./api.js";
import { h, setText } from "./dom.js";
import { fmtBytes } from "./format.js";
import { navigate } from "./router.js";

const PROFILES = ["small-cnn", "large-transformer", "failing"];

export class SubmitForm {
  constructor() {
    const field = (label, input) => h("label", {}, label, input);
    this.kind = h("select", {name: "kind"}, h("option", {value: "simulate", text: "Simulated (no GPU)"}),
      h("option", {value: "model", text: "ONNX model in a model root"}),
      h("option", {value: "uploaded", text: "Uploaded model"}));
    this.profile = h("input", {name: "simulate", list: "profiles", value: "small-cnn", required: true});
    this.seed = h("input", {name: "seed", type: "number", min: "0", step: "1", placeholder: "0"});
    this.speed = h("input", {name: "speed", type: "number", min: "0.01", max: "1000", step: "any", placeholder: "1"});
    this.model = h("input", {name: "model", placeholder: "resnet50/model.onnx"});
    this.uploaded = h("select", {name: "uploaded"});
    this.pathField = field("Model (.onnx, relative to a model root)", this.model);
    this.uploadedField = field("Uploaded model (PUT /models/NAME)", this.uploaded);
    this.flags = ["fp16", "bf16", "int8", "verbose"].map((name) => h("input", {type: "checkbox", name}));
    this.workspace = h("input", {name: "workspace", type: "number", min: "1", placeholder: "MiB"});
    this.extra = h("input", {name: "options", placeholder: '{"timing-cache": "cache.bin"}'});
    this.timeout = h("input", {name: "timeout", placeholder: "30m, 90s, 2h"});
    this.error = h("p.form-error", {role: "alert"});
    this.button = h("button.primary", {type: "submit", text: "Start build"});
    this.simFields = h("div.form-grid", {}, field("Profile", this.profile), field("Seed", this.seed), field("Speed ×", this.speed));
    this.modelFields = h("div.form-grid", {hidden: true}, this.pathField, this.uploadedField,
      h("div.field", {}, "Precision and logging", h("div.checks", {}, ...this.flags.map((f) => h("label", {}, f, f.name)))),
      field("Workspace (MiB)", this.workspace), field("More options (JSON object)", this.extra));
    this.kind.addEventListener("change", () => {
      const sim = this.kind.value === "simulate";
      const uploaded = this.kind.value === "uploaded";
      this.simFields.hidden = !sim;
      this.modelFields.hidden = sim;
      this.pathField.hidden = uploaded;
      this.uploadedField.hidden = !uploaded;
      this.profile.required = sim;
      this.model.required = this.kind.value === "model";
      this.uploaded.required = uploaded;
      if (uploaded) this.loadModels();
    });
    this.element = h("details.panel.submit", {},
      h("summary", {text: "New build"}),
      h("form", {on: {submit: (e) => this.submit(e)}},
        h("div.form-grid", {}, field("Kind", this.kind), field("Time budget", this.timeout)),
        this.simFields, this.modelFields,
        h("datalist", {id: "profiles"}, ...PROFILES.map((p) => h("option", {value: p}))),
        this.error, this.button));
  }
  // The uploaded models that builds may name (complete ones: model.onnx is there).
  async loadModels() {
    try {
      const {models} = await api("/models");
      const usable = models.filter((m) => m.complete);
      this.uploaded.replaceChildren(...usable.map((m) => h("option", {value: m.name,
        text: `${m.name} (${fmtBytes(m.files.reduce((n, f) => n + f.size, 0))})`})));
      setText(this.error, usable.length ? "" : "No uploaded models yet: upload one with PUT /models/NAME (see the API docs).");
    } catch (err) {
      if (err.status !== 401) setText(this.error, `Cannot list uploaded models: ${err.message}`);
    }
  }
  request() {
    const body = {};
    if (this.kind.value === "simulate") {
      body.simulate = this.profile.value.trim();
      if (this.seed.value !== "") body.seed = Number(this.seed.value);
      if (this.speed.value !== "") body.speed = Number(this.speed.value);
    } else {
      body.model = this.kind.value === "uploaded" ? `models:${this.uploaded.value}` : this.model.value.trim();
      const options = {};
      if (this.extra.value.trim()) {
        let extra;
        try { extra = JSON.parse(this.extra.value); } catch (e) { throw new Error("More options must be a JSON object, e.g. {\"maxThreads\": 4}"); }
        if (!extra || typeof extra !== "object" || Array.isArray(extra)) throw new Error("More options must be a JSON object");
        Object.assign(options, extra);
      }
      for (const f of this.flags) if (f.checked) options[f.name] = true;
      if (this.workspace.value !== "") options.workspace = Number(this.workspace.value);
      if (Object.keys(options).length) body.options = options;
    }
    if (this.timeout.value.trim()) body.timeout = this.timeout.value.trim();
    return body;
  }
  async submit(e) {
    e.preventDefault();
    setText(this.error, "");
    this.button.disabled = true;
    try {
      const build = await api("/builds", {method: "POST", body: JSON.stringify(this.request())});
      navigate(`/ui/builds/${build.id}`);
    } catch (err) {
      if (err.status === 429) setText(this.error, "The queue is full (429): wait for builds to finish, or cancel some.");
      else if (err.status !== 401) setText(this.error, err.message);
    } finally {
      this.button.disabled = false;
    }
  }
}
