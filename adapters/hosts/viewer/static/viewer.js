// plait viewer: small progressive touches; every page works without this file.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // a filter select submits its form at once
  for (const select of document.querySelectorAll("form.filters select")) {
    select.addEventListener("change", () => select.form.requestSubmit());
  }
  // a forget or drop button is pressed once: a second press would act on nothing
  for (const form of document.querySelectorAll("form[method=post]")) {
    form.addEventListener("submit", () => {
      for (const button of form.querySelectorAll("button")) button.disabled = true;
    });
  }
});
