export { classify, type Intent } from "./intents.js";
export { createOfflineModel, type OfflineModelOptions } from "./model.js";
