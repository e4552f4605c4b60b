// Fernhouse's only script: the catalogue, the basket (in localStorage, so
// each fresh browser context starts with an empty one) and the header count.
const PRODUCTS = [
  { slug: "kentia-palm", name: "Kentia palm", kind: "Palms", price: 34, light: "Bright, indirect", water: "Every 10 days", height: "120 cm",
    lead: "The parlour palm of Victorian drawing rooms: slow, elegant and forgiving of a dim corner." },
  { slug: "boston-fern", name: "Boston fern", kind: "Ferns", price: 18, light: "Indirect", water: "Keep moist", height: "45 cm",
    lead: "Arching, feathery fronds that love a steamy bathroom and a weekly mist." },
  { slug: "snake-plant", name: "Snake plant", kind: "Succulents", price: 22, light: "Any", water: "Every 3 weeks", height: "70 cm",
    lead: "Upright striped leaves that shrug off neglect, low light and the odd forgotten month." },
  { slug: "birds-nest-fern", name: "Bird's nest fern", kind: "Ferns", price: 24, light: "Indirect", water: "Weekly", height: "50 cm",
    lead: "Glossy, rippled leaves unfurling from a central rosette like a nest." },
  { slug: "areca-palm", name: "Areca palm", kind: "Palms", price: 42, light: "Bright, indirect", water: "Weekly", height: "150 cm",
    lead: "Golden stems and feathery fronds that bring a holiday to the living room." },
  { slug: "zebra-haworthia", name: "Zebra haworthia", kind: "Succulents", price: 12, light: "Bright", water: "Every 2 weeks", height: "12 cm",
    lead: "A pocket-sized succulent with white-striped leaves for the sunniest sill." },
];
const money = (n) => "£" + n.toFixed(2);
const bySlug = (s) => PRODUCTS.find((p) => p.slug === s);

function readBasket() {
  try { return JSON.parse(localStorage.getItem("basket") || "{}"); } catch { return {}; }
}
function writeBasket(b) { localStorage.setItem("basket", JSON.stringify(b)); renderCount(); }
function addToBasket(slug, qty = 1) {
  const b = readBasket();
  b[slug] = (b[slug] || 0) + qty;
  writeBasket(b);
}
function basketSize() { return Object.values(readBasket()).reduce((a, n) => a + n, 0); }
function renderCount() {
  const el = document.querySelector(".basket-count");
  if (el) el.textContent = String(basketSize());
}

function header(current) {
  const link = (href, label, key) =>
    `<a href="${href}"${key === current ? ' aria-current="page"' : ""}>${label}</a>`;
  return `<header class="site-header">
  <a class="logo" href="index.html" aria-label="Fernhouse home">
    <svg width="34" height="34" viewBox="0 0 34 34" aria-hidden="true"><circle cx="17" cy="17" r="17" fill="#9fd3a8"/><path d="M17 27 C17 18 12 12 7 10 C13 10 17 14 17 20 C17 14 21 9 27 8 C22 11 17 17 17 27 Z" fill="#1f3d2f"/></svg>
    Fernhouse
  </a>
  <nav class="site-nav" aria-label="Main">
    ${link("index.html", "Shop", "shop")}
    ${link("offers.html", "Offers", "offers")}
    ${link("signup.html", "Sign up", "signup")}
    <a class="basket-link" href="basket.html"${current === "basket" ? ' aria-current="page"' : ""}>Basket <span class="basket-count" id="basket-count">0</span></a>
  </nav>
</header>`;
}
function footer() {
  return `<footer class="site-footer"><div class="inner">
  <div><b>Fernhouse</b><br>Houseplants grown slowly in Somerset and delivered in recycled pots.</div>
  <div><b>Help</b><br>Delivery &amp; returns<br>Plant care<br>Contact</div>
  <div><b>Visit</b><br>Unit 4, Old Dairy Yard<br>Frome BA11 1AA</div>
</div></footer>`;
}
function mountChrome(current) {
  document.body.insertAdjacentHTML("afterbegin", header(current));
  document.body.insertAdjacentHTML("beforeend", footer());
  renderCount();
}
