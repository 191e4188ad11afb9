//! Strongly connected components of the system-move graph (Tarjan's algorithm, with an
//! explicit stack: the graphs have millions of nodes, far deeper than a thread's stack).

use super::graph::{Graph, Node};

/// Per node, the number of its component. Components are numbered in the order Tarjan's
/// algorithm completes them.
pub fn components(g: &Graph) -> Vec<u32> {
    const UNSEEN: u32 = u32::MAX;
    let n = g.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![UNSEEN; n];
    let mut stack: Vec<Node> = Vec::new();
    // The depth-first path: a node and how many of its edges have been looked at.
    let mut path: Vec<(Node, usize)> = Vec::new();
    let mut next_index = 0u32;
    let mut next_component = 0u32;
    for root in 0..n as Node {
        if index[root as usize] != UNSEEN {
            continue;
        }
        path.push((root, 0));
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut i)) = path.last_mut() {
            let out = g.out(v);
            if let Some(edge) = out.get(*i) {
                *i += 1;
                let w = edge.to as usize;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(edge.to);
                    on_stack[w] = true;
                    path.push((edge.to, 0));
                } else if on_stack[w] {
                    low[v as usize] = low[v as usize].min(index[w]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    component[w as usize] = next_component;
                    if w == v {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    component
}
