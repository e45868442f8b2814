export async function main(_args: string[]): Promise<number> {
  console.error('rxkube demo: not available yet');
  return 1;
}
