// Progressive enhancement for secrets shown once: a "Copy" button next to each secret field.
// Without JavaScript the buttons stay hidden and the field can be selected and copied by hand.
(function () {
  'use strict';
  var buttons = document.querySelectorAll('button[data-copy]');
  if (!navigator.clipboard) return;
  Array.prototype.forEach.call(buttons, function (button) {
    var field = document.getElementById(button.getAttribute('data-copy'));
    if (!field) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(field.value).then(function () {
        button.textContent = 'Copied';
        setTimeout(function () { button.textContent = label; }, 2000);
      }, function () {
        field.focus();
        field.select();
      });
    });
  });
})();
