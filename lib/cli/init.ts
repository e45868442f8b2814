export async function main(_args: string[]): Promise<number> {
  return 1;
}
