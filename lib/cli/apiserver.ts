export async function main(_args: string[]): Promise<number> {
  console.error('rxkube apiserver: not available yet');
  return 1;
}
