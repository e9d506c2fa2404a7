static int helper(int x) { return x * 3 + 1; }
int exported(int x) {
  int total = 0;
  for (int i = 0; i < x; ++i) total += helper(i);
  return total;
}
void _start(void) { exported(3); for (;;) {} }
