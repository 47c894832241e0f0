import { lazy, StrictMode, Suspense } from "react";
import { createRoot } from "react-dom/client";
import { APPROVE_LINK, OPERATOR_PAGE_PATH } from "../../src/protocol/ids.js";
import { App } from "./App.js";
import { ApprovePage } from "./ApprovePage.js";
import "./styles.css";

// Loaded only on its own path: the chat page's visitors never download it.
const OperatorPage = lazy(() =>
  import("./operator/OperatorPage.js").then((m) => ({ default: m.OperatorPage })),
);

const root = document.getElementById("root");
if (!root) throw new Error("no #root element");
// `/approve/<paymentId>`: the approval page an agent sends its user to; `/operator`: the operator
// page (docs/operator-page.md); anything else, the chat.
const path = window.location.pathname;
// Any id: a mistyped one gets the API's "no payment with this id" on the page, not raw JSON.
const approve = APPROVE_LINK.exec(path)?.[1];
const page = approve ? (
  <ApprovePage paymentId={approve} />
) : OPERATOR_PAGE_PATH.test(path) ? (
  <Suspense fallback={null}>
    <OperatorPage />
  </Suspense>
) : (
  <App />
);
createRoot(root).render(<StrictMode>{page}</StrictMode>);
