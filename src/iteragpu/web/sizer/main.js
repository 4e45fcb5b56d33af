/*
 * The browser's entry: publishes the sizer's API as window.IteraGPUSizer and starts the page
 * (a page that holds <script type="application/json" id="sizer-data">; elsewhere nothing
 * starts). Loaded with <script type="module">, so it runs once the document is parsed.
 * Mirrors no Python module.
 */

import api from "./index.js";

globalThis.IteraGPUSizer = api;
api.autostart(globalThis);
