/** Shows `message` in an error box at the top of the brief (role `alert`: read out by screen readers). */
export function showError(message: string): void {
  const box = document.createElement('div');
  box.className = 'error';
  box.setAttribute('role', 'alert');
  box.textContent = message;
  document.getElementById('root')?.prepend(box);
}
