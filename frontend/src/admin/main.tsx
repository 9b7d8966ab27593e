// Entry of admin.html: the panel's styles, state and event stream.
import "./admin.css";

import { render } from "preact";

import { App } from "./app";
import { store } from "./store";

render(<App />, document.getElementById("root")!);
store.connect();
