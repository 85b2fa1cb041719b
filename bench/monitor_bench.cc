// placeholder, replaced below
int main() {}
