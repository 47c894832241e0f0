import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import { ApprovePage } from "./ApprovePage.js";
import "./styles.css";

const root = document.getElementById("root");
if (!root) throw new Error("no #root element");
// `/approve/<paymentId>`: the approval page an agent sends its user to; anything else, the chat.
const approve = /^\/approve\/(pay_[0-9a-f-]{36})$/.exec(window.location.pathname)?.[1];
createRoot(root).render(<StrictMode>{approve ? <ApprovePage paymentId={approve} /> : <App />}</StrictMode>);
