#!/usr/bin/env bash
# collision/ sits below the engine and takes the scene as a view
# (collision/scene_view.h): its sources include collision/, core/, sched/
# and the public API only, and none names the world or its objects.
set -uo pipefail
src=${HY_SOURCE_DIR:?}
fail=0
shopt -s nullglob
files=("$src"/collision/*.c "$src"/collision/*.h "$src"/collision/*.cu)
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no sources under $src/collision"; exit 1; }

bad=$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${files[@]}" |
      grep -v '#[[:space:]]*include[[:space:]]*"\(collision\|core\|sched\|hyphys\)/')
if [ -n "$bad" ]; then
  echo "FAIL: collision/ includes above its layer:"; echo "$bad"; fail=1
fi

bad=$(grep -Hnw 'hy_world\|hy_object\|HY_OBJECT_CLOTH\|HY_OBJECT_BODY\|HY_OBJECT_OBSTACLE' "${files[@]}")
if [ -n "$bad" ]; then
  echo "FAIL: collision/ names the world or its object kinds:"; echo "$bad"; fail=1
fi

[ $fail -eq 0 ] && echo "collision/: ${#files[@]} files, includes collision/ core/ sched/ hyphys/ only"
exit $fail
