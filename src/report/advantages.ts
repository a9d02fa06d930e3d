import { groupAdvantages } from '../eval/metrics.js';
import type { RunStore } from '../run/store.js';
import type { TrajectoryRecord } from '../trajectory/record.js';

interface GroupMember {
  key: string;
  sample: number;
  reward: number | null;
  advantage: number | null;
}

/**
 * Give every finished rollout its group-relative advantage (reward − group mean) / (group std + ε),
 * the group being the item's K samples. Recomputed over the whole store, so a resume that adds
 * samples updates the earlier ones too. Returns how many records changed.
 */
export function applyAdvantages(store: RunStore): number {
  const groups = new Map<string, GroupMember[]>();
  for (const row of store.items({ status: ['done'] })) {
    if (row.record === null) continue;
    const record = JSON.parse(row.record) as TrajectoryRecord;
    const group = record.group ?? row.key;
    let members = groups.get(group);
    if (!members) groups.set(group, (members = []));
    members.push({ key: row.key, sample: row.sample, reward: record.reward, advantage: record.advantage });
  }
  let changed = 0;
  store.transaction(() => {
    for (const members of groups.values()) {
      const advantages = groupAdvantages(members.map((member) => member.reward));
      members.forEach((member, index) => {
        const advantage = advantages[index]!;
        if (advantage === member.advantage) return;
        const stored = store.getItem(member.key, member.sample);
        if (!stored?.record) return;
        store.updateRecord(member.key, member.sample, { ...JSON.parse(stored.record), advantage }, stored.reward);
        changed++;
      });
    }
  });
  return changed;
}
