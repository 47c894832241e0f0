import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { APPROVE_PATH } from "../../src/protocol/ids.js";
import { App } from "./App.js";
import { ApprovePage } from "./ApprovePage.js";
import "./styles.css";

const root = document.getElementById("root");
if (!root) throw new Error("no #root element");
// `/approve/<paymentId>`: the approval page an agent sends its user to; anything else, the chat.
const approve = APPROVE_PATH.exec(window.location.pathname)?.[1];
createRoot(root).render(<StrictMode>{approve ? <ApprovePage paymentId={approve} /> : <App />}</StrictMode>);
