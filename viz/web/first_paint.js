// The first-paint probe (viz/pages/parts/first_paint.py): mounted at the end of a run that held
// something back, it runs once the browser has drawn the page, and asks for the run that draws it.
export default function (component) {
  component.setTriggerValue("drawn", true);
}
